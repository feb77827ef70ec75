/* The embedded default: with no daemon, the first client starts one (found
 * through FABMEM_DAEMON or PATH), racing clients end up with one daemon, and
 * an autostarted daemon leaves by itself once idle. The test process makes
 * itself a child subreaper, so the daemon (double-forked away from the
 * client) becomes its child: its exit is awaited with waitpid, not a sleep,
 * and no zombie is left for init. */
#include "fabtest.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fabmem.h"

static char *prepare(void)
{
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    char *dir = fab_test_tempdir();
    assert_non_null(dir);
    char path[512];
    snprintf(path, sizeof(path), "%s/fabmem.ini", dir);
    fab_test_write_file(path, "[daemon]\nidle_exit = 1\n[channel 0]\nuids = 0\n");
    setenv("FABMEM_CONFIG", path, 1);
    snprintf(path, sizeof(path), "%s/run/fabmemd.sock", dir);
    setenv("FABMEM_SOCKET", path, 1);
    unsetenv("FABMEM_NO_AUTOSTART");
    return dir;
}

/* Wait for the autostarted daemon to exit (it idles out after a second),
 * then reap every other orphan that came our way (daemons that gave way). */
static void await_exit(pid_t pid)
{
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
        ;
}

static void first_client_starts_a_daemon_that_leaves_when_idle(void **state)
{
    (void)state;
    char *dir = prepare();
    fab_client_t *client;
    fab_client_options_t options = {NULL, NULL, 1};
    assert_int_equal(fab_client_connect(&options, &client), FAB_SUCCESS);
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
    struct stat st;
    char run[512];
    snprintf(run, sizeof(run), "%s/run", dir);
    assert_int_equal(stat(run, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
    await_exit((pid_t)stats.pid);
    assert_int_not_equal(stat(getenv("FABMEM_SOCKET"), &st), 0); /* cleaned up */
    fab_test_rmtree(dir);
    free(dir);
}

static void daemon_is_found_on_path(void **state)
{
    (void)state;
    char *dir = prepare();
    const char *exe = getenv("FABMEM_DAEMON");
    assert_non_null(exe);
    char bindir[512];
    snprintf(bindir, sizeof(bindir), "%s", exe);
    *strrchr(bindir, '/') = '\0';
    char *saved = strdup(exe);
    unsetenv("FABMEM_DAEMON");
    setenv("PATH", bindir, 1);
    fab_client_t *client;
    fab_status_t status = fab_client_connect(NULL, &client);
    setenv("FABMEM_DAEMON", saved, 1);
    free(saved);
    assert_int_equal(status, FAB_SUCCESS);
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
    await_exit((pid_t)stats.pid);
    fab_test_rmtree(dir);
    free(dir);
}

/* helper "racer": connect with autostart, report the daemon's pid, wait. */
static int helper_racer(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    fab_test_expect_word(sock, "go");
    fab_client_t *client;
    fab_daemon_stats_t stats;
    if (fab_client_connect(NULL, &client) != FAB_SUCCESS ||
        fab_client_stats(client, &stats) != FAB_SUCCESS)
        return 10;
    char pid[32];
    snprintf(pid, sizeof(pid), "%llu", (unsigned long long)stats.pid);
    fab_test_send_word(sock, pid);
    fab_test_expect_word(sock, "bye");
    fab_client_close(client);
    return 0;
}

static void racing_clients_share_one_daemon(void **state)
{
    (void)state;
    enum { N = 6 };
    char *dir = prepare();
    fab_test_child_t children[N];
    for (int i = 0; i < N; i++)
        assert_int_equal(fab_test_spawn("racer", NULL, NULL, &children[i]), 0);
    for (int i = 0; i < N; i++)
        assert_int_equal(fab_test_send_word(children[i].sock, "go"), 0);
    char first[256] = "";
    for (int i = 0; i < N; i++) {
        uint8_t len;
        char pid[256];
        assert_int_equal(fab_test_recv(children[i].sock, &len, 1), 0);
        assert_int_equal(fab_test_recv(children[i].sock, pid, len), 0);
        pid[len] = '\0';
        if (i == 0)
            strcpy(first, pid);
        assert_string_equal(pid, first);
    }
    for (int i = 0; i < N; i++) {
        fab_test_send_word(children[i].sock, "bye");
        assert_int_equal(fab_test_reap(&children[i]), 0);
    }
    await_exit((pid_t)atol(first));
    fab_test_rmtree(dir);
    free(dir);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(first_client_starts_a_daemon_that_leaves_when_idle),
    cmocka_unit_test(daemon_is_found_on_path),
    cmocka_unit_test(racing_clients_share_one_daemon),
};

static const fab_test_helper_t helpers[] = {{"racer", helper_racer}};

FAB_TEST_MAIN("fabric", tests, helpers)
