/* fabmem status and fabmem verify against a real daemon: the tool is run as a
 * user runs it (a separate process, $FABMEM_SOCKET pointing at the daemon),
 * and its exit status and output are checked. */
#include "fabtest.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon_harness.h"
#include "fabmem.h"

#define OUT_MAX 8192

/* Run the tool with args; its stdout and stderr go to out. Returns its exit
 * status. */
static int run_tool(const char *const *args, char *out)
{
    const char *tool = getenv("FABMEM_TOOL");
    assert_non_null(tool);
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    const char *argv[8] = {tool};
    size_t k = 1;
    for (size_t i = 0; args[i] && k < 7; i++)
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

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(status_shows_the_daemons_counters, fab_test_teardown),
    cmocka_unit_test(status_without_a_daemon_says_so),
    cmocka_unit_test_teardown(status_shows_the_daemons_topology_not_its_own_config, fab_test_teardown),
    cmocka_unit_test_teardown(verify_says_live_for_a_live_handle, fab_test_teardown),
    cmocka_unit_test_teardown(verify_says_gone_after_the_last_release, fab_test_teardown),
    cmocka_unit_test_teardown(verify_refuses_a_handle_of_another_fabric, fab_test_teardown),
};
FAB_TEST_MAIN_NO_HELPERS("cli", tests)
