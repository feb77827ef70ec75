/* fabmem status and fabmem verify against a real daemon: the tool is run as a
 * user runs it (a separate process, $FABMEM_SOCKET pointing at the daemon),
 * and its exit status and output are checked. */
#include "fabtest.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "daemon_harness.h"
#include "fabmem.h"

#define OUT_MAX 32768

/* Run the tool with args; its stdout and stderr go to out. Returns its exit
 * status. */
static int run_tool(const char *const *args, char *out)
{
    const char *tool = getenv("FABMEM_TOOL");
    assert_non_null(tool);
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    const char *argv[24] = {tool};
    size_t k = 1;
    for (size_t i = 0; args[i] && k < 23; i++)
        argv[k++] = args[i];
    argv[k] = NULL;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(pipefd[1], 1);
        dup2(pipefd[1], 2);
        close(pipefd[0]);
        execv(tool, (char *const *)argv);
        _exit(127);
    }
    close(pipefd[1]);
    size_t len = 0;
    ssize_t n;
    while (len < OUT_MAX - 1 && (n = read(pipefd[0], out + len, OUT_MAX - 1 - len)) > 0)
        len += (size_t)n;
    out[len] = '\0';
    close(pipefd[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

/* run_tool, but given up after seconds: the tool is then killed and the
 * test fails, saying what it printed so far. */
static int run_tool_within(const char *const *args, char *out, int seconds)
{
    const char *tool = getenv("FABMEM_TOOL");
    assert_non_null(tool);
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    const char *argv[24] = {tool};
    size_t k = 1;
    for (size_t i = 0; args[i] && k < 23; i++)
        argv[k++] = args[i];
    argv[k] = NULL;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(pipefd[1], 1);
        dup2(pipefd[1], 2);
        close(pipefd[0]);
        execv(tool, (char *const *)argv);
        _exit(127);
    }
    close(pipefd[1]);
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    size_t len = 0;
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        long left = seconds * 1000L - ((now.tv_sec - start.tv_sec) * 1000L +
                                       (now.tv_nsec - start.tv_nsec) / 1000000);
        struct pollfd pfd = {.fd = pipefd[0], .events = POLLIN};
        int ready = left > 0 ? poll(&pfd, 1, (int)left) : 0;
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0) {
            out[len] = '\0';
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            close(pipefd[0]);
            fail_msg("fabmem %s still runs after %d s:\n%s", args[0], seconds, out);
        }
        ssize_t n = read(pipefd[0], out + len, OUT_MAX - 1 - len);
        if (n <= 0 || (len += (size_t)n) == OUT_MAX - 1)
            break;
    }
    out[len] = '\0';
    close(pipefd[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static fab_client_t *connect_client(void)
{
    fab_client_t *client = NULL;
    assert_int_equal(fab_client_connect(NULL, &client), FAB_SUCCESS);
    return client;
}

static fab_region_t *allocate(fab_client_t *client)
{
    fab_alloc_props_t props = fab_alloc_props_read_write(0, (size_t)2 << 20);
    fab_region_t *region = NULL;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_SUCCESS);
    return region;
}

static void handle_hex(const fab_handle_t *handle, char out[2 * FAB_HANDLE_BYTES + 1])
{
    for (int i = 0; i < FAB_HANDLE_BYTES; i++)
        snprintf(out + 2 * i, 3, "%02x", handle->bytes[i]);
}

/* Export region's handle now; the caller may change the daemon's state before
 * verify_exported runs the tool on it. */
static fab_handle_t exported(fab_region_t *region)
{
    fab_handle_t handle;
    assert_int_equal(fab_region_export(region, &handle), FAB_SUCCESS);
    return handle;
}

/* Run "fabmem verify <hex of handle>"; returns its exit status. */
static int verify_exported(const fab_handle_t *handle, char out[OUT_MAX])
{
    char hex[2 * FAB_HANDLE_BYTES + 1];
    handle_hex(handle, hex);
    const char *args[] = {"verify", hex, NULL};
    return run_tool(args, out);
}

static void status_shows_the_daemons_counters(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    fab_client_t *client = connect_client();
    fab_region_t *region = allocate(client);
    char out[OUT_MAX];
    const char *args[] = {"status", NULL};
    assert_int_equal(run_tool(args, out), 0);
    if (!strstr(out, "allocations  1 (2097152 bytes)") || !strstr(out, "clients      2"))
        fail_msg("unexpected status output:\n%s", out);
    if (!strstr(out, "gpus 8"))
        fail_msg("the default topology is not shown:\n%s", out);
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static void status_shows_the_daemons_topology_not_its_own_config(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start("[channel 0]\nuids = 0\n[node left]\ngpus = 2\n"
                                      "[node right]\ngpus = 3\nimex_domain = other\n", NULL));
    setenv("FABMEM_CONFIG", "/nonexistent/fabmem.ini", 1); /* the tool inherits it */
    char out[OUT_MAX];
    const char *args[] = {"status", NULL};
    assert_int_equal(run_tool(args, out), 0);
    unsetenv("FABMEM_CONFIG");
    if (!strstr(out, "2 node(s)") || !strstr(out, "right") || !strstr(out, "gpus 3"))
        fail_msg("the daemon's topology is not shown:\n%s", out);
}

static void status_without_a_daemon_says_so(void **state)
{
    (void)state;
    char *dir = fab_test_tempdir();
    assert_non_null(dir);
    char sock[512];
    snprintf(sock, sizeof(sock), "%s/nobody-listens.sock", dir);
    setenv("FABMEM_SOCKET", sock, 1);
    char out[OUT_MAX];
    const char *args[] = {"status", NULL};
    assert_int_equal(run_tool(args, out), 1);
    if (!strstr(out, "no daemon answers at") || !strstr(out, "FAB_ERROR_SYSTEM_NOT_READY"))
        fail_msg("unexpected output:\n%s", out);
    /* The tool observes; it must not have started a daemon there. */
    assert_int_not_equal(access(sock, F_OK), 0);
    fab_test_rmtree(dir);
    free(dir);
}

static void verify_says_live_for_a_live_handle(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    fab_client_t *client = connect_client();
    fab_region_t *region = allocate(client);
    fab_handle_t handle = exported(region);
    char out[OUT_MAX];
    assert_int_equal(verify_exported(&handle, out), 0);
    if (!strstr(out, "tag verified") || !strstr(out, "live"))
        fail_msg("unexpected output:\n%s", out);
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static void verify_says_gone_after_the_last_release(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    fab_client_t *client = connect_client();
    fab_region_t *region = allocate(client);
    fab_handle_t handle = exported(region);
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    /* A round trip after the release, so the daemon has handled it. */
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
    char out[OUT_MAX];
    assert_int_equal(verify_exported(&handle, out), 1);
    if (!strstr(out, "gone: the handle is stale"))
        fail_msg("unexpected output:\n%s", out);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static void verify_refuses_a_handle_of_another_fabric(void **state)
{
    (void)state;
    /* Minted by one daemon, presented to another with its own key. */
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    fab_client_t *client = connect_client();
    fab_region_t *region = allocate(client);
    fab_handle_t handle = exported(region);
    assert_non_null(fab_test_daemon_start(NULL, NULL)); /* FABMEM_SOCKET now names it */
    char out[OUT_MAX];
    assert_int_equal(verify_exported(&handle, out), 1);
    if (!strstr(out, "FAB_ERROR_INVALID_HANDLE"))
        fail_msg("unexpected output:\n%s", out);
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

/* Four nodes: a and b share a cluster and clique but b's fabric is still
 * coming up, c is in another clique, d in another IMEX domain. */
static const char four_nodes[] =
    "[channel 0]\nuids = 0\n"
    "[node a]\ngpus = 2\nimex_domain = one\n"
    "cluster_uuid = 11111111-2222-3333-4444-555555555555\nclique_id = 1\n"
    "[node b]\ngpus = 2\nimex_domain = one\n"
    "cluster_uuid = 11111111-2222-3333-4444-555555555555\nclique_id = 1\n"
    "fabric_state = in_progress\n"
    "[node c]\nimex_domain = one\n"
    "cluster_uuid = 11111111-2222-3333-4444-555555555555\nclique_id = 2\n"
    "[node d]\nimex_domain = two\n";

static void nodes_shows_who_can_share_with_whom(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(four_nodes, NULL));
    char out[OUT_MAX];
    const char *args[] = {"nodes", NULL};
    assert_int_equal(run_tool(args, out), 0);
    const char *rows[] = {"        0  C  N  N  .\n", "        1  N  N  N  .\n",
                          "        2  N  N  C  .\n", "        3  .  .  .  C\n",
                          "IMEX domain  one, 3 node(s), this process on a (#0)",
                          "domain state DEGRADED: 1 of 3 node(s) not COMPLETED",
                          "11111111-2222-3333-4444-555555555555  1       IN_PROGRESS"};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        if (!strstr(out, rows[i]))
            fail_msg("\"%s\" is missing from:\n%s", rows[i], out);
    }
}

/* Run the tool with args and parse its stdout as JSON (asserted). */
static json_t *run_json(const char *const *args)
{
    char out[OUT_MAX];
    assert_int_equal(run_tool(args, out), 0);
    json_error_t error;
    json_t *root = json_loads(out, 0, &error);
    if (root == NULL)
        fail_msg("not JSON (%s, line %d):\n%s", error.text, error.line, out);
    return root;
}

/* The table is a promise about the daemon's answers: every cell of
 * nodes --json is what an import on that node of memory made on a gets. */
static void nodes_json_predicts_every_import(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(four_nodes, NULL));
    const char *args[] = {"nodes", "--json", NULL};
    json_t *root = run_json(args);
    assert_string_equal(json_string_value(json_object_get(root, "domain_state")), "DEGRADED");
    assert_int_equal(json_integer_value(json_object_get(root, "nodes_not_ready")), 1);
    json_t *nodes = json_object_get(root, "nodes");
    assert_int_equal(json_array_size(nodes), 4);
    json_t *from_a = json_object_get(json_array_get(nodes, 0), "can_share_with");
    fab_client_options_t on_a = {NULL, "a", 0};
    fab_client_t *exporter = NULL;
    assert_int_equal(fab_client_connect(&on_a, &exporter), FAB_SUCCESS);
    fab_region_t *region = allocate(exporter);
    fab_handle_t handle = exported(region);
    const char *names[] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; i++) {
        fab_client_options_t options = {NULL, names[i], 0};
        fab_client_t *importer = NULL;
        assert_int_equal(fab_client_connect(&options, &importer), FAB_SUCCESS);
        fab_region_t *imported = NULL;
        fab_status_t got = fab_client_import(importer, &handle, 0, &imported);
        const char *cell = json_string_value(json_object_get(from_a, names[i]));
        assert_non_null(cell);
        const char *want = got == FAB_SUCCESS                 ? "connected"
                           : got == FAB_ERROR_NOT_SUPPORTED   ? "no_fabric_path"
                           : got == FAB_ERROR_INVALID_HANDLE  ? "other_domain"
                                                              : "?";
        if (strcmp(cell, want) != 0)
            fail_msg("node %s: the table says %s, the import got %s", names[i], cell,
                     fab_status_name(got));
        if (imported != NULL)
            assert_int_equal(fab_region_release(imported), FAB_SUCCESS);
        assert_int_equal(fab_client_close(importer), FAB_SUCCESS);
    }
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    assert_int_equal(fab_client_close(exporter), FAB_SUCCESS);
    json_decref(root);
}

static void status_json_has_the_counters_and_the_daemons_topology(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(fab_test_example_config("nvl72.ini"), NULL));
    setenv("FABMEM_CONFIG", "/nonexistent/fabmem.ini", 1); /* the tool inherits it */
    fab_client_t *client = connect_client();
    fab_region_t *region = allocate(client);
    const char *args[] = {"status", "--json", NULL};
    json_t *root = run_json(args);
    unsetenv("FABMEM_CONFIG");
    json_t *daemon = json_object_get(root, "daemon");
    assert_int_equal(json_integer_value(json_object_get(daemon, "allocations")), 1);
    assert_int_equal(json_integer_value(json_object_get(daemon, "bytes")), 2 << 20);
    json_t *topology = json_object_get(root, "topology");
    assert_int_equal(json_integer_value(json_object_get(topology, "driver_version")), 13000);
    json_t *nodes = json_object_get(topology, "nodes");
    assert_int_equal(json_array_size(nodes), 18);
    json_t *tray07 = json_array_get(nodes, 7);
    assert_string_equal(json_string_value(json_object_get(tray07, "name")), "tray07");
    json_t *devices = json_object_get(tray07, "devices");
    assert_int_equal(json_array_size(devices), 4);
    assert_string_equal(json_string_value(json_object_get(json_array_get(devices, 0), "name")),
                        "fabmem GB200 (emulated)");
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(devices, 0), "compute_capability")),
        "10.0");
    json_decref(root);
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static void nodes_without_a_daemon_says_so(void **state)
{
    (void)state;
    char *dir = fab_test_tempdir();
    assert_non_null(dir);
    char sock[512];
    snprintf(sock, sizeof(sock), "%s/nobody-listens.sock", dir);
    setenv("FABMEM_SOCKET", sock, 1);
    char out[OUT_MAX];
    const char *args[] = {"nodes", "--json", NULL};
    assert_int_equal(run_tool(args, out), 1);
    if (!strstr(out, "no daemon answers at"))
        fail_msg("unexpected output:\n%s", out);
    fab_test_rmtree(dir);
    free(dir);
}

/* fabmem smi shows, for every GPU of the node, the identity and the fabric
 * that NVML and libcuda give a program there: the topology's own values. */
static void smi_json_shows_the_nodes_gpus_and_their_fabric(void **state)
{
    (void)state;
    char *dir = NULL;
    char *config = fab_test_config_file(fab_test_example_config("fabric_faults.ini"), &dir);
    const char *args[] = {"run", "--config", config, "--node", "degraded", "--",
                          getenv("FABMEM_TOOL"), "smi", "--json", NULL};
    json_t *root = run_json(args);
    fab_topology_t *topology = NULL;
    assert_int_equal(fab_topology_load(config, &topology), FAB_SUCCESS);
    int node = -1;
    assert_int_equal(fab_topology_find_node(topology, "degraded", &node), FAB_SUCCESS);
    assert_string_equal(json_string_value(json_object_get(root, "node")), "degraded");
    json_t *gpus = json_object_get(root, "gpus");
    fab_node_info_t info;
    assert_int_equal(fab_topology_node(topology, node, &info), FAB_SUCCESS);
    assert_int_equal(json_array_size(gpus), info.device_count);
    for (int d = 0; d < info.device_count; d++) {
        json_t *gpu = json_array_get(gpus, (size_t)d);
        fab_device_info_t dev;
        assert_int_equal(fab_topology_device(topology, node, d, &dev), FAB_SUCCESS);
        char uuid[FAB_UUID_STRING_MAX], bus[FAB_PCI_BUS_ID_MAX];
        fab_device_uuid_string(&dev.uuid, uuid, sizeof(uuid));
        fab_device_pci_bus_id(&dev, bus, sizeof(bus));
        assert_string_equal(json_string_value(json_object_get(gpu, "uuid")), uuid);
        assert_string_equal(json_string_value(json_object_get(gpu, "bus_id")), bus);
        json_t *fabric = json_object_get(gpu, "fabric");
        assert_string_equal(json_string_value(json_object_get(fabric, "state")), "COMPLETED");
        json_t *health = json_object_get(fabric, "health");
        assert_string_equal(json_string_value(json_object_get(health, "bandwidth")), "Degraded");
        assert_string_equal(json_string_value(json_object_get(health, "route_unhealthy")),
                            "False");
    }
    fab_topology_destroy(topology);
    json_decref(root);
    fab_test_rmtree(dir);
    free(dir);
    free(config);
}

static void smi_text_has_nvidia_smis_fabric_fields(void **state)
{
    (void)state;
    char *dir = NULL;
    char *config = fab_test_config_file(fab_test_example_config("nvl72.ini"), &dir);
    char out[OUT_MAX];
    const char *args[] = {"run", "--config", config, "--node", "tray07", "--",
                          getenv("FABMEM_TOOL"), "smi", NULL};
    assert_int_equal(run_tool(args, out), 0);
    const char *want[] = {"Attached GPUs          4", "Product Name           fabmem GB200",
                          "GPU UUID               GPU-", "State              COMPLETED",
                          "Status             Success", "CliqueId           1",
                          "ClusterUUID        4e564c37-3200-4000-8000-000000000001",
                          "Bandwidth                    Full"};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        if (!strstr(out, want[i]))
            fail_msg("\"%s\" is missing from:\n%s", want[i], out);
    }
    fab_test_rmtree(dir);
    free(dir);
    free(config);
}

/* ---- fabmem run ---- */

static void run_gives_the_program_a_daemon_serving_the_config(void **state)
{
    (void)state;
    char *dir = NULL;
    char *config = fab_test_config_file(fab_test_example_config("nvl72.ini"), &dir);
    const char *tool = getenv("FABMEM_TOOL");
    char out[OUT_MAX];
    const char *args[] = {"run", "--config", config, "--node", "tray07", "--", tool, "nodes", NULL};
    assert_int_equal(run_tool(args, out), 0);
    if (!strstr(out, "IMEX domain  nvl72-rack0, 18 node(s), this process on tray07 (#7)"))
        fail_msg("the program did not see the daemon's topology:\n%s", out);
    fab_test_rmtree(dir);
    free(dir);
    free(config);
}

static void run_ends_with_the_programs_status_and_leaves_nothing(void **state)
{
    (void)state;
    char out[OUT_MAX];
    /* The program says where its daemon is and which pid it has, and exits 7. */
    const char *args[] = {"run", "--", "sh", "-c",
                          "echo socket=$FABMEM_SOCKET; \"$0\" status --json | grep '\"pid\"'; exit 7",
                          getenv("FABMEM_TOOL"), NULL};
    assert_int_equal(run_tool(args, out), 7);
    const char *s = strstr(out, "socket=");
    const char *p = strstr(out, "\"pid\": ");
    assert_non_null(s);
    assert_non_null(p);
    char socket[512];
    assert_int_equal(sscanf(s, "socket=%511s", socket), 1);
    long pid = strtol(p + 7, NULL, 10);
    assert_true(pid > 0);
    /* The daemon is gone (reaped by fabmem run, so not even a zombie), and so
     * are its socket and its directory. */
    assert_int_equal(kill((pid_t)pid, 0), -1);
    assert_int_equal(access(socket, F_OK), -1);
    *strrchr(socket, '/') = '\0';
    assert_int_equal(access(socket, F_OK), -1);
}

static void run_puts_the_emulation_first_on_the_library_path(void **state)
{
    (void)state;
    char out[OUT_MAX];
    const char *args[] = {"run", "--", "sh", "-c",
                          "d=${LD_LIBRARY_PATH%%:*}; test -e \"$d/libcuda.so.1\" && echo first=$d",
                          NULL};
    assert_int_equal(run_tool(args, out), 0);
    if (!strstr(out, "first=") || !strstr(out, "/lib/fabmem"))
        fail_msg("the emulation is not first on LD_LIBRARY_PATH:\n%s", out);
}

/* --kernels: each library, as an absolute path, in FABMEM_KERNELS, in the
 * order given and before what the environment had. */
static void run_names_kernel_libraries_in_fabmem_kernels(void **state)
{
    (void)state;
    char *dir = fab_test_tempdir();
    assert_non_null(dir);
    char a[512], b[512];
    snprintf(a, sizeof(a), "%s/liba.so", dir);
    snprintf(b, sizeof(b), "%s/libb.so", dir);
    fab_test_write_file(a, "");
    fab_test_write_file(b, "");
    setenv("FABMEM_KERNELS", "/old/libk.so", 1);
    char out[OUT_MAX];
    const char *args[] = {"run", "--kernels", a, "--kernels", b, "--", "sh", "-c",
                          "echo kernels=$FABMEM_KERNELS", NULL};
    assert_int_equal(run_tool(args, out), 0);
    unsetenv("FABMEM_KERNELS");
    char want[2048];
    snprintf(want, sizeof(want), "kernels=%s:%s:/old/libk.so\n", a, b);
    if (!strstr(out, want))
        fail_msg("FABMEM_KERNELS is not %s:\n%s", want, out);
    const char *missing[] = {"run", "--kernels", "/no/such/lib.so", "--", "true", NULL};
    assert_int_equal(run_tool(missing, out), 2);
    fab_test_rmtree(dir);
    free(dir);
}

/* The runtime sits beside the driver, and a run inside a run does not put
 * the emulation's folder on the path twice. */
static void run_puts_the_runtime_beside_the_driver_once(void **state)
{
    (void)state;
    char out[OUT_MAX];
    const char *args[] = {"run", "--", getenv("FABMEM_TOOL"), "run", "--", "sh", "-c",
                          "d=${LD_LIBRARY_PATH%%:*}; rest=${LD_LIBRARY_PATH#\"$d\"};"
                          " test -e \"$d/libcudart.so.13\" && echo runtime=yes;"
                          " case \"$rest\" in *\"$d\"*) echo twice;; esac",
                          NULL};
    assert_int_equal(run_tool(args, out), 0);
    if (!strstr(out, "runtime=yes") || strstr(out, "twice"))
        fail_msg("libcudart.so.13 is not first on the path exactly once:\n%s", out);
}

static void run_runs_a_cuda_program_unchanged(void **state)
{
    (void)state;
    const char *example = getenv("FABMEM_EXAMPLE_EXCHANGE");
    if (example == NULL || *example == '\0')
        fab_test_skip("built only with the driver emulation");
    char out[OUT_MAX];
    const char *args[] = {"run", "--", example, NULL};
    assert_int_equal(run_tool(args, out), 0);
    if (!strstr(out, "the importer answered \"and back again\""))
        fail_msg("the exchange did not complete:\n%s", out);
}

static void run_with_a_bad_config_names_it_and_runs_nothing(void **state)
{
    (void)state;
    char *dir = NULL;
    char *config = fab_test_config_file("[node a]\ncolour = blue\n", &dir);
    char out[OUT_MAX];
    const char *args[] = {"run", "--config", config, "--", "sh", "-c", "echo ran", NULL};
    assert_int_equal(run_tool(args, out), 1);
    if (!strstr(out, "fabmem.ini:2") || !strstr(out, "fabmemd did not start") || strstr(out, "ran\n"))
        fail_msg("unexpected output:\n%s", out);
    fab_test_rmtree(dir);
    free(dir);
    free(config);
}

static void run_without_a_program_is_a_usage_error(void **state)
{
    (void)state;
    char out[OUT_MAX];
    const char *args[] = {"run", "--config", "x.ini", NULL};
    assert_int_equal(run_tool(args, out), 2);
    if (!strstr(out, "no program after --"))
        fail_msg("unexpected output:\n%s", out);
}

/* ---- fabmem run --node-per-rank against another user's files ---------------- */

#define NOBODY 65534

/* helper "plant_job_files" TMP ID WHERE: as uid 65534, make and flock the
 * files a job of uid 0 and id ID would use under TMP (a sticky directory
 * anyone may write, as /tmp): WHERE "lock" the janitor's lock file the job
 * used to keep in TMP itself (and the one in the user's jobs directory, if
 * it can); "jobs" the user's jobs directory itself, with the lock in it.
 * Says "ready", and holds the locks until the parent goes. */
static int helper_plant_job_files(int argc, char **argv, int sock)
{
    if (argc < 4 || setgroups(0, NULL) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0)
        return 10;
    char jobs[600], path[700];
    snprintf(jobs, sizeof(jobs), "%s/fabmem-jobs-0", argv[1]);
    int held = 0;
    if (strcmp(argv[3], "jobs") == 0) {
        if (mkdir(jobs, 0777) != 0 || chmod(jobs, 0777) != 0)
            return 11;
    } else {
        snprintf(path, sizeof(path), "%s/fabmem-job-0-%s.lock", argv[1], argv[2]);
        int fd = open(path, O_RDWR | O_CREAT, 0644);
        if (fd < 0 || flock(fd, LOCK_EX) != 0)
            return 12;
        held++;
    }
    snprintf(path, sizeof(path), "%s/%s.lock", jobs, argv[2]);
    int fd = open(path, O_RDWR | O_CREAT, 0644);
    if (fd >= 0 && flock(fd, LOCK_EX) == 0)
        held++;
    char word[16];
    snprintf(word, sizeof(word), "%d", held);
    if (fab_test_send_word(sock, "ready") != 0 || fab_test_send_word(sock, word) != 0)
        return 13;
    char byte;
    while (read(sock, &byte, 1) > 0)
        ;
    return 0;
}

/* A private sticky temp dir that anyone may write (as /tmp), with the
 * attacker's files planted in it as WHERE says; the helper holds them. */
static char *plant_in_shared_tmp(const char *id, const char *where, fab_test_child_t *child)
{
    char *tmp = fab_test_tempdir();
    assert_non_null(tmp);
    assert_int_equal(chmod(tmp, 01777), 0);
    const char *args[] = {tmp, id, where, NULL};
    assert_int_equal(fab_test_spawn("plant_job_files", args, NULL, child), 0);
    assert_int_equal(fab_test_expect_word(child->sock, "ready"), 0);
    setenv("TMPDIR", tmp, 1);
    setenv("PMIX_RANK", "0", 1);
    setenv("PMIX_NAMESPACE", id, 1);
    unsetenv("FABMEM_SOCKET");
    return tmp;
}

/* Another user pre-creates and flocks the lock file a job's first rank
 * used to wait on in /tmp: the rank no longer looks there (its job files
 * live in a directory of its user's alone), so its job runs and leaves
 * nothing. */
static void run_node_per_rank_is_not_held_by_another_users_lock_file(void **state)
{
    (void)state;
    if (getuid() != 0)
        fab_test_skip("needs root, to plant the files as a second uid");
    fab_test_child_t child;
    char *tmp = plant_in_shared_tmp("ctest_held", "lock", &child);
    char word[16] = "";
    uint8_t len = 0;
    assert_int_equal(fab_test_recv(child.sock, &len, 1), 0);
    assert_int_equal(fab_test_recv(child.sock, word, len), 0);
    assert_string_equal(word, "1"); /* the old path: yes; inside the jobs directory: no */
    char out[OUT_MAX];
    const char *args[] = {"run", "--node-per-rank", "--", "sh", "-c", "echo ran on $FABMEM_NODE", NULL};
    assert_int_equal(run_tool_within(args, out, 60), 0);
    if (!strstr(out, "ran on node0"))
        fail_msg("the rank did not run:\n%s", out);
    char path[700];
    snprintf(path, sizeof(path), "%s/fabmem-jobs-0/ctest_held", tmp);
    assert_int_equal(access(path, F_OK), -1);
    close(child.sock);
    kill(child.pid, SIGKILL);
    (void)fab_test_reap(&child);
    fab_test_rmtree(tmp);
    free(tmp);
}

/* Another user makes the user's jobs directory before the user's first
 * job: the rank refuses it at once, saying so, and waits on nothing. */
static void run_node_per_rank_refuses_a_jobs_directory_another_user_made(void **state)
{
    (void)state;
    if (getuid() != 0)
        fab_test_skip("needs root, to plant the files as a second uid");
    fab_test_child_t child;
    char *tmp = plant_in_shared_tmp("ctest_theirs", "jobs", &child);
    char out[OUT_MAX];
    const char *args[] = {"run", "--node-per-rank", "--", "true", NULL};
    assert_int_equal(run_tool_within(args, out, 60), 2);
    if (!strstr(out, "fabmem-jobs-0 is not a private directory of this user"))
        fail_msg("the refusal does not name the directory:\n%s", out);
    close(child.sock);
    kill(child.pid, SIGKILL);
    (void)fab_test_reap(&child);
    fab_test_rmtree(tmp);
    free(tmp);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(run_node_per_rank_is_not_held_by_another_users_lock_file),
    cmocka_unit_test(run_node_per_rank_refuses_a_jobs_directory_another_user_made),
    cmocka_unit_test_teardown(status_shows_the_daemons_counters, fab_test_teardown),
    cmocka_unit_test(status_without_a_daemon_says_so),
    cmocka_unit_test_teardown(nodes_shows_who_can_share_with_whom, fab_test_teardown),
    cmocka_unit_test_teardown(nodes_json_predicts_every_import, fab_test_teardown),
    cmocka_unit_test_teardown(status_json_has_the_counters_and_the_daemons_topology,
                              fab_test_teardown),
    cmocka_unit_test(nodes_without_a_daemon_says_so),
    cmocka_unit_test(smi_json_shows_the_nodes_gpus_and_their_fabric),
    cmocka_unit_test(smi_text_has_nvidia_smis_fabric_fields),
    cmocka_unit_test(run_gives_the_program_a_daemon_serving_the_config),
    cmocka_unit_test(run_ends_with_the_programs_status_and_leaves_nothing),
    cmocka_unit_test(run_puts_the_emulation_first_on_the_library_path),
    cmocka_unit_test(run_runs_a_cuda_program_unchanged),
    cmocka_unit_test(run_with_a_bad_config_names_it_and_runs_nothing),
    cmocka_unit_test(run_without_a_program_is_a_usage_error),
    cmocka_unit_test(run_names_kernel_libraries_in_fabmem_kernels),
    cmocka_unit_test(run_puts_the_runtime_beside_the_driver_once),
    cmocka_unit_test_teardown(status_shows_the_daemons_topology_not_its_own_config, fab_test_teardown),
    cmocka_unit_test_teardown(verify_says_live_for_a_live_handle, fab_test_teardown),
    cmocka_unit_test_teardown(verify_says_gone_after_the_last_release, fab_test_teardown),
    cmocka_unit_test_teardown(verify_refuses_a_handle_of_another_fabric, fab_test_teardown),
};
static const fab_test_helper_t helpers[] = {
    {"plant_job_files", helper_plant_job_files},
};

FAB_TEST_MAIN("cli", tests, helpers)
