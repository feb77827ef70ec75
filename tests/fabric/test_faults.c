/* Field faults of the fabric (docs/fabric.md, "Field faults"): the emulated
 * IMEX service down or hung, a node's GPUs isolated from each other, fabric
 * state and Fabric Manager changed, channels withdrawn; each by config and
 * at run time through the daemon (FAULT, as `fabmem fault` sends it), with
 * reset, the owner-only rule (a helper that drops to a second uid) and bad
 * requests. A hung import is shown to hold only its own client: another is
 * served meanwhile, and its answer comes when the fault changes; no test
 * measures a duration. */
#include "daemon_harness.h"

#include <poll.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fabmem.h"
#include "src/common/faultwords.h"
#include "src/common/proto.h"
#include "src/common/topology_impl.h"
#include "src/fabric/client_fault.h"

#define MIB2 (2u * 1024 * 1024)

/* Nodes a and b can share FABRIC memory; the [daemon], a and b sections
 * each get the keys given. */
static const char *config(const char *daemon_keys, const char *a_keys, const char *b_keys)
{
    static char text[1024];
    snprintf(text, sizeof(text),
             "[daemon]\nsocket_mode = 0666\n%s"
             "[channel 0]\nuids = 0\n"
             "[node a]\nimex_domain = one\ncluster_uuid = 11111111-2222-3333-4444-555555555555\n"
             "clique_id = 1\ngpus = 2\n%s"
             "[node b]\nimex_domain = one\ncluster_uuid = 11111111-2222-3333-4444-555555555555\n"
             "clique_id = 1\ngpus = 2\n%s",
             daemon_keys, a_keys, b_keys);
    return text;
}

static fab_region_t *allocate(fab_client_t *client, int device, fab_handle_t *handle_out)
{
    fab_alloc_props_t props = fab_alloc_props_read_write(device, MIB2);
    fab_region_t *region = NULL;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_SUCCESS);
    assert_int_equal(fab_region_export(region, handle_out), FAB_SUCCESS);
    return region;
}

/* Import handle on node's device, expecting want. */
static void expect_import(const char *node, int device, const fab_handle_t *handle,
                          fab_status_t want)
{
    fab_client_t *client = fab_test_connect_node(node);
    fab_region_t *region = NULL;
    fab_status_t got = fab_client_import(client, handle, device, &region);
    if (got != want)
        fail_msg("import on node %s device %d: %s, want %s", node, device, fab_status_name(got),
                 fab_status_name(want));
    if (got == FAB_SUCCESS)
        fab_region_release(region);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static void fault(fab_client_t *client, uint8_t op, const char *key, uint32_t target,
                  const char *value, fab_status_t want)
{
    int k = key != NULL ? fab__fault_key_parse(key) : 0;
    int32_t v = 0;
    if (key != NULL)
        assert_int_equal(fab__fault_value_parse(k, value, &v), 0);
    else if (value != NULL)
        v = atoi(value);
    assert_int_equal(fab__client_fault(client, op, (uint8_t)k, target, v), want);
}

/* Node b is index 1 in config(). */
#define NODE_B 1

/* A raw connection that said HELLO as a client of node. */
static int raw_hello_on(const char *node)
{
    int sock = fab_test_raw_connect(getenv("FABMEM_SOCKET"));
    assert_true(sock >= 0);
    fab__request_t hello = {.type = FAB__MSG_HELLO, .seq = 1};
    hello.u.hello.version = FAB__PROTO_VERSION;
    hello.u.hello.name_len = (uint8_t)strlen(node);
    memcpy(hello.u.hello.name, node, strlen(node));
    assert_int_equal(fab_test_raw_call(sock, &hello, -1, NULL, NULL), FAB_SUCCESS);
    return sock;
}

static void raw_send_import(int sock, const fab_handle_t *handle)
{
    fab__request_t import = {.type = FAB__MSG_IMPORT, .seq = 2};
    import.u.import.device = 0;
    import.u.import.handle = *handle;
    fab_test_raw_send(sock, &import, -1);
}

/* Whether a reply waits on sock right now (no waiting). */
static int raw_reply_waiting(int sock)
{
    struct pollfd p = {.fd = sock, .events = POLLIN};
    return poll(&p, 1, 0) == 1;
}

/* ---- by config ----------------------------------------------------------------- */

static void imex_down_by_config_fails_imports_across_nodes_only(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(config("", "", "imex = down\n"), NULL));
    fab_client_t *a = fab_test_connect_node("a");
    fab_handle_t handle;
    fab_region_t *region = allocate(a, 0, &handle); /* allocation and export still work */
    expect_import("b", 0, &handle, FAB_ERROR_INVALID_HANDLE);
    expect_import("a", 1, &handle, FAB_SUCCESS);
    fab_client_t *b = fab_test_connect_node("b");
    fab_handle_t from_b;
    fab_region_t *on_b = allocate(b, 0, &from_b); /* on the node whose IMEX is down */
    expect_import("a", 0, &from_b, FAB_ERROR_INVALID_HANDLE);
    expect_import("b", 1, &from_b, FAB_SUCCESS);
    fab_region_release(on_b);
    fab_region_release(region);
    fab_client_close(b);
    fab_client_close(a);
}

static void imex_hung_by_config_fails_the_import_at_its_timeout(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(config("imex_timeout_ms = 20\n", "", "imex = hung\n"),
                                          NULL));
    fab_client_t *a = fab_test_connect_node("a");
    fab_handle_t handle;
    fab_region_t *region = allocate(a, 0, &handle);
    expect_import("b", 0, &handle, FAB_ERROR_INVALID_HANDLE);
    expect_import("a", 1, &handle, FAB_SUCCESS);
    fab_region_release(region);
    fab_client_close(a);
}

static void isolated_gpus_by_config_refuse_imports_onto_another_gpu(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(config("", "gpus_isolated = yes\n", ""), NULL));
    fab_client_t *a = fab_test_connect_node("a");
    fab_handle_t handle;
    fab_region_t *region = allocate(a, 0, &handle);
    expect_import("a", 1, &handle, FAB_ERROR_INVALID_DEVICE);
    expect_import("a", 0, &handle, FAB_SUCCESS); /* the same GPU, another process */
    expect_import("b", 1, &handle, FAB_SUCCESS); /* another node: through the fabric */
    fab_region_release(region);
    fab_client_close(a);
}

static void config_refuses_bad_fault_values_naming_the_key(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "[node a]\nimex = sideways\n",
        "[node a]\ngpus_isolated = maybe\n",
        "[daemon]\nimex_timeout_ms = soon\n",
    };
    char path[] = "/tmp/fabmem-faults-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        fab_test_write_file(path, bad[i]);
        fab_topology_t *topology = NULL;
        assert_int_equal(fab_topology_load(path, &topology), FAB_ERROR_INVALID_VALUE);
    }
    fab_test_write_file(path, "[daemon]\nimex_timeout_ms = 250\n[node a]\nimex = hung\n"
                              "gpus_isolated = yes\n");
    fab_topology_t *topology = NULL;
    assert_int_equal(fab_topology_load(path, &topology), FAB_SUCCESS);
    assert_int_equal(topology->imex_timeout_ms, 250);
    int32_t v = 0;
    assert_true(fab__topology_attribute(topology, 0, FAB__ATTRIBUTE_IMEX, &v));
    assert_int_equal(v, FAB__IMEX_HUNG);
    assert_true(fab__topology_attribute(topology, 0, FAB__ATTRIBUTE_GPUS_ISOLATED, &v));
    assert_int_equal(v, 1);
    fab_topology_destroy(topology);
    unlink(path);
}

/* ---- at run time ---------------------------------------------------------------- */

static void imex_down_then_up_at_run_time(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(config("", "", ""), NULL));
    fab_client_t *a = fab_test_connect_node("a");
    fab_handle_t handle;
    fab_region_t *region = allocate(a, 0, &handle);
    expect_import("b", 0, &handle, FAB_SUCCESS);
    fault(a, FAB__FAULT_OP_SET, "imex", NODE_B, "down", FAB_SUCCESS);
    expect_import("b", 0, &handle, FAB_ERROR_INVALID_HANDLE);
    fault(a, FAB__FAULT_OP_SET, "imex", NODE_B, "up", FAB_SUCCESS);
    expect_import("b", 0, &handle, FAB_SUCCESS);
    fab_region_release(region);
    fab_client_close(a);
}

static void imex_hung_at_run_time_fails_the_import_at_its_timeout(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(config("imex_timeout_ms = 20\n", "", ""), NULL));
    fab_client_t *a = fab_test_connect_node("a");
    fab_handle_t handle;
    fab_region_t *region = allocate(a, 0, &handle);
    fault(a, FAB__FAULT_OP_SET, "imex", NODE_B, "hung", FAB_SUCCESS);
    expect_import("b", 0, &handle, FAB_ERROR_INVALID_HANDLE);
    fab_region_release(region);
    fab_client_close(a);
}

static void hung_import_holds_only_its_own_client(void **state)
{
    (void)state;
    /* A timeout no test run reaches: the hold ends by the fault changing. */
    assert_non_null(fab_test_daemon_start(config("imex_timeout_ms = 3600000\n", "", "imex = hung\n"),
                                          NULL));
    fab_client_t *a = fab_test_connect_node("a");
    fab_handle_t handle;
    fab_region_t *region = allocate(a, 0, &handle);
    int held = raw_hello_on("b");
    raw_send_import(held, &handle);
    /* Another client is served while the import is held ... */
    fab_handle_t other;
    fab_region_t *second = allocate(a, 1, &other);
    expect_import("a", 0, &other, FAB_SUCCESS);
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(a, &stats), FAB_SUCCESS);
    assert_false(raw_reply_waiting(held));
    /* ... and IMEX going down answers it with IMEX's failure. */
    fault(a, FAB__FAULT_OP_SET, "imex", NODE_B, "down", FAB_SUCCESS);
    assert_int_equal(fab_test_raw_reply(held, NULL, NULL), FAB_ERROR_INVALID_HANDLE);
    close(held);
    fab_region_release(second);
    fab_region_release(region);
    fab_client_close(a);
}

static void hung_import_succeeds_when_imex_comes_back_up(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(config("imex_timeout_ms = 3600000\n", "", ""), NULL));
    fab_client_t *a = fab_test_connect_node("a");
    fab_handle_t handle;
    fab_region_t *region = allocate(a, 0, &handle);
    fault(a, FAB__FAULT_OP_SET, "imex", 0, "hung", FAB_SUCCESS); /* the exporter's side */
    int held = raw_hello_on("b");
    raw_send_import(held, &handle);
    assert_int_equal(fab_client_stats(a, &(fab_daemon_stats_t){0}), FAB_SUCCESS);
    assert_false(raw_reply_waiting(held));
    fault(a, FAB__FAULT_OP_SET, "imex", 0, "up", FAB_SUCCESS);
    int fd = -1;
    fab__reply_t reply;
    assert_int_equal(fab_test_raw_reply(held, &reply, &fd), FAB_SUCCESS);
    assert_true(fd >= 0);
    assert_int_equal(reply.u.import.size, MIB2);
    close(fd);
    close(held);
    fab_region_release(region);
    fab_client_close(a);
}

static void held_import_of_a_client_that_leaves_is_dropped(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon =
        fab_test_daemon_start(config("imex_timeout_ms = 3600000\n", "", "imex = hung\n"), NULL);
    assert_non_null(daemon);
    fab_client_t *a = fab_test_connect_node("a");
    fab_handle_t handle;
    fab_region_t *region = allocate(a, 0, &handle);
    int held = raw_hello_on("b");
    raw_send_import(held, &handle);
    assert_int_equal(fab_client_stats(a, &(fab_daemon_stats_t){0}), FAB_SUCCESS);
    close(held);
    /* The daemon notices, and the fault changing later finds nothing held. */
    fab_daemon_stats_t stats;
    do
        assert_int_equal(fab_client_stats(a, &stats), FAB_SUCCESS);
    while (stats.clients != 1);
    fault(a, FAB__FAULT_OP_SET, "imex", NODE_B, "up", FAB_SUCCESS);
    assert_int_equal(fab_client_stats(a, &stats), FAB_SUCCESS);
    assert_int_equal(stats.references, 1);
    fab_region_release(region);
    fab_client_close(a);
}

static void isolated_gpus_at_run_time(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(config("", "", ""), NULL));
    fab_client_t *a = fab_test_connect_node("a");
    fab_handle_t handle;
    fab_region_t *region = allocate(a, 0, &handle);
    fault(a, FAB__FAULT_OP_SET, "gpus_isolated", 0, "yes", FAB_SUCCESS);
    expect_import("a", 1, &handle, FAB_ERROR_INVALID_DEVICE);
    fault(a, FAB__FAULT_OP_SET, "gpus_isolated", 0, "no", FAB_SUCCESS);
    expect_import("a", 1, &handle, FAB_SUCCESS);
    fab_region_release(region);
    fab_client_close(a);
}

static void fabric_state_and_manager_changes_reach_running_clients(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(config("", "", ""), NULL));
    fab_client_t *a = fab_test_connect_node("a");
    fab_client_t *b = fab_test_connect_node("b"); /* running before the fault */
    const fab_topology_t *before = NULL, *after = NULL;
    assert_int_equal(fab_client_topology(b, &before), FAB_SUCCESS);
    fab_handle_t handle;
    fab_region_t *region = allocate(a, 0, &handle);
    fault(a, FAB__FAULT_OP_SET, "fabric_state", NODE_B, "in_progress", FAB_SUCCESS);
    fault(a, FAB__FAULT_OP_SET, "fabric_manager", NODE_B, "down", FAB_SUCCESS);
    fab_region_t *imported;
    assert_int_equal(fab_client_import(b, &handle, 0, &imported), FAB_ERROR_NOT_SUPPORTED);
    bool changed = false;
    assert_int_equal(fab__client_topology_refresh(b, &after, &changed), FAB_SUCCESS);
    assert_true(changed);
    fab_node_info_t node;
    assert_int_equal(fab_topology_node(after, NODE_B, &node), FAB_SUCCESS);
    assert_int_equal(node.fabric_state, FAB_FABRIC_STATE_IN_PROGRESS);
    int32_t fm = 0;
    assert_true(fab__topology_attribute(after, NODE_B, FAB__ATTRIBUTE_FABRIC_MANAGER_DOWN, &fm));
    assert_int_equal(fm, 1);
    assert_int_equal(fab_topology_node(before, NODE_B, &node), FAB_SUCCESS); /* still readable */
    assert_int_equal(node.fabric_state, FAB_FABRIC_STATE_COMPLETED);
    /* Asked again with nothing changed: the same topology, no refetch. */
    const fab_topology_t *again = NULL;
    assert_int_equal(fab__client_topology_refresh(b, &again, &changed), FAB_SUCCESS);
    assert_false(changed);
    assert_ptr_equal(again, after);
    fault(a, FAB__FAULT_OP_SET, "fabric_state", NODE_B, "completed", FAB_SUCCESS);
    assert_int_equal(fab_client_import(b, &handle, 0, &imported), FAB_SUCCESS);
    fab_region_release(imported);
    fab_region_release(region);
    fab_client_close(b);
    fab_client_close(a);
}

static void withdrawn_channel_refuses_until_restored(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(config("", "", ""), NULL));
    fab_client_t *a = fab_test_connect_node("a");
    fab_handle_t handle;
    fab_region_t *region = allocate(a, 0, &handle);
    fault(a, FAB__FAULT_OP_CHANNEL, NULL, 0, "1", FAB_SUCCESS);
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    fab_region_t *none = NULL;
    assert_int_equal(fab_client_allocate(a, &props, &none), FAB_ERROR_NOT_PERMITTED);
    expect_import("b", 0, &handle, FAB_ERROR_NOT_PERMITTED);
    fault(a, FAB__FAULT_OP_CHANNEL, NULL, 0, "0", FAB_SUCCESS);
    expect_import("b", 0, &handle, FAB_SUCCESS);
    fab_region_t *again = NULL;
    assert_int_equal(fab_client_allocate(a, &props, &again), FAB_SUCCESS);
    fab_region_release(again);
    fab_region_release(region);
    fab_client_close(a);
}

static void reset_returns_every_fault_to_the_config(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(config("", "", "imex = down\n"), NULL));
    fab_client_t *a = fab_test_connect_node("a");
    fab_handle_t handle;
    fab_region_t *region = allocate(a, 0, &handle);
    fault(a, FAB__FAULT_OP_SET, "imex", NODE_B, "up", FAB_SUCCESS);
    fault(a, FAB__FAULT_OP_SET, "gpus_isolated", 0, "yes", FAB_SUCCESS);
    fault(a, FAB__FAULT_OP_CHANNEL, NULL, 5, "1", FAB_SUCCESS);
    expect_import("b", 0, &handle, FAB_SUCCESS);
    expect_import("a", 1, &handle, FAB_ERROR_INVALID_DEVICE);
    fault(a, FAB__FAULT_OP_RESET, NULL, 0, NULL, FAB_SUCCESS);
    expect_import("b", 0, &handle, FAB_ERROR_INVALID_HANDLE); /* the config's imex = down */
    expect_import("a", 1, &handle, FAB_SUCCESS);
    fab_region_release(region);
    fab_client_close(a);
}

static void bad_fault_requests_are_refused(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(config("", "", ""), NULL));
    fab_client_t *a = fab_test_connect_node("a");
    assert_int_equal(fab__client_fault(a, FAB__FAULT_OP_SET, FAB__FAULT_KEY_IMEX, 2, 0),
                     FAB_ERROR_INVALID_VALUE); /* no third node */
    assert_int_equal(fab__client_fault(a, FAB__FAULT_OP_SET, FAB__FAULT_KEY_IMEX, 0, 3),
                     FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab__client_fault(a, FAB__FAULT_OP_SET, 0, 0, 0), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab__client_fault(a, FAB__FAULT_OP_CHANNEL, 0, 64, 1), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab__client_fault(a, FAB__FAULT_OP_CHANNEL, 0, 0, 2), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab__client_fault(a, FAB__FAULT_OP_RESET, 0, 1, 0), FAB_ERROR_INVALID_VALUE);
    /* The connection stays: a refusal is an answer. */
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(a, &stats), FAB_SUCCESS);
    fab_client_close(a);
}

/* helper "nobody-fault": drop to uid 65534 and ask for a fault; report the
 * status as a word. */
static int helper_nobody_fault(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    if (getuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
        return 10;
    fab_client_t *client;
    fab_status_t status = fab_client_connect(NULL, &client);
    if (status == FAB_SUCCESS) {
        status = fab__client_fault(client, FAB__FAULT_OP_SET, FAB__FAULT_KEY_IMEX, 0,
                                   FAB__IMEX_DOWN);
        fab_client_close(client);
    }
    return fab_test_send_word(sock, fab_status_name(status)) == 0 ? 0 : 11;
}

static void another_uid_may_not_change_faults(void **state)
{
    (void)state;
    if (getuid() != 0)
        fab_test_skip("needs a second uid");
    assert_non_null(fab_test_daemon_start(
        "[daemon]\nsocket_mode = 0666\n[channel 0]\nuids = 0, 65534\n[node a]\ngpus = 2\n"
        "[node b]\ngpus = 2\n", NULL));
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("nobody-fault", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "FAB_ERROR_NOT_PERMITTED"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    /* Nothing changed: an import across the nodes still works. */
    fab_client_t *a = fab_test_connect_node("a");
    fab_handle_t handle;
    fab_region_t *region = allocate(a, 0, &handle);
    expect_import("b", 0, &handle, FAB_SUCCESS);
    fab_region_release(region);
    fab_client_close(a);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(imex_down_by_config_fails_imports_across_nodes_only,
                              fab_test_teardown),
    cmocka_unit_test_teardown(imex_hung_by_config_fails_the_import_at_its_timeout,
                              fab_test_teardown),
    cmocka_unit_test_teardown(isolated_gpus_by_config_refuse_imports_onto_another_gpu,
                              fab_test_teardown),
    cmocka_unit_test_teardown(config_refuses_bad_fault_values_naming_the_key, fab_test_teardown),
    cmocka_unit_test_teardown(imex_down_then_up_at_run_time, fab_test_teardown),
    cmocka_unit_test_teardown(imex_hung_at_run_time_fails_the_import_at_its_timeout,
                              fab_test_teardown),
    cmocka_unit_test_teardown(hung_import_holds_only_its_own_client, fab_test_teardown),
    cmocka_unit_test_teardown(hung_import_succeeds_when_imex_comes_back_up, fab_test_teardown),
    cmocka_unit_test_teardown(held_import_of_a_client_that_leaves_is_dropped, fab_test_teardown),
    cmocka_unit_test_teardown(isolated_gpus_at_run_time, fab_test_teardown),
    cmocka_unit_test_teardown(fabric_state_and_manager_changes_reach_running_clients,
                              fab_test_teardown),
    cmocka_unit_test_teardown(withdrawn_channel_refuses_until_restored, fab_test_teardown),
    cmocka_unit_test_teardown(reset_returns_every_fault_to_the_config, fab_test_teardown),
    cmocka_unit_test_teardown(bad_fault_requests_are_refused, fab_test_teardown),
    cmocka_unit_test_teardown(another_uid_may_not_change_faults, fab_test_teardown),
};

static const fab_test_helper_t helpers[] = {
    {"nobody-fault", helper_nobody_fault},
};

FAB_TEST_MAIN("fabric", tests, helpers)
