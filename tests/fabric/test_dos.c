/* The trust boundary's second round: what one uid can take from another on a
 * shared daemon, tried as that other uid. A listen backlog another uid
 * fills (the victim's connect ends at its deadline); IPC entries, references,
 * fds in flight and log lines, each bounded per uid while the other uid is
 * served. Every test needs a second uid: it runs as root, drops its
 * attacker to uid 65534 in a helper, and is reported skipped otherwise. */
#include "daemon_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fabmem.h"
#include "src/common/memfd.h"
#include "src/common/proto.h"

#define MIB2 (2u << 20)
#define NOBODY 65534

static int drop_to_nobody(void)
{
    return getuid() == 0 && (setgroups(0, NULL) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0)
               ? -1
               : 0;
}

static void skip_unless_root(void)
{
    if (getuid() != 0)
        fab_test_skip("needs root, to run an attacker as a second uid");
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int under_valgrind(void)
{
    const char *launcher = getenv("FABTEST_DAEMON_LAUNCHER");
    return launcher != NULL && *launcher != '\0';
}

/* ---- connect with a full backlog ------------------------------------------- */

/* helper "backlog_filler" PATH: as uid 65534, connect to PATH (without
 * blocking) until the listen backlog is full, say "ready" with the count,
 * and hold the connections until the parent goes. */
static int helper_backlog_filler(int argc, char **argv, int sock)
{
    if (argc < 2 || drop_to_nobody() != 0)
        return 10;
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", argv[1]);
    int count = 0;
    for (; count < 100000; count++) {
        int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0);
        if (s < 0)
            return 11;
        if (connect(s, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
            close(s);
            if (errno != EAGAIN)
                return 12;
            break;
        }
    }
    char word[32];
    snprintf(word, sizeof(word), "%d", count);
    if (fab_test_send_word(sock, "ready") != 0 || fab_test_send_word(sock, word) != 0)
        return 13;
    char byte;
    while (read(sock, &byte, 1) > 0)
        ;
    return 0;
}

/* helper "connect_victim": connect (FABMEM_TIMEOUT_MS from the
 * environment), then say the status and how many ms it took. */
static int helper_connect_victim(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    double start = now_s();
    fab_client_t *client = NULL;
    fab_status_t status = fab_client_connect(NULL, &client);
    char ms[32];
    snprintf(ms, sizeof(ms), "%d", (int)((now_s() - start) * 1000));
    if (fab_test_send_word(sock, fab_status_name(status)) != 0 ||
        fab_test_send_word(sock, ms) != 0)
        return 10;
    if (client != NULL)
        fab_client_close(client);
    return 0;
}

/* The words a helper sent, one at a time: the next one (asserted). */
static void recv_word(int sock, char *word, size_t cap)
{
    uint8_t len;
    assert_int_equal(fab_test_recv(sock, &len, 1), 0);
    assert_true(len < cap);
    assert_int_equal(fab_test_recv(sock, word, len), 0);
    word[len] = '\0';
}

/* A daemon that takes no connection (stopped here, as a daemon busy or out
 * of fds would be) and whose backlog another uid filled: a client's connect
 * waits no longer than FABMEM_TIMEOUT_MS, then says SYSTEM_NOT_READY. */
static void connect_ends_at_the_deadline_when_another_uid_fills_the_backlog(void **state)
{
    (void)state;
    skip_unless_root();
    fab_test_daemon_t *d = fab_test_daemon_start("[daemon]\nsocket_mode = 0666\n", NULL);
    assert_non_null(d);
    assert_int_equal(kill(d->pid, SIGSTOP), 0);
    int status = 0;
    assert_int_equal(waitpid(d->pid, &status, WUNTRACED), d->pid);

    fab_test_child_t filler;
    const char *args[] = {d->socket, NULL};
    assert_int_equal(fab_test_spawn("backlog_filler", args, NULL, &filler), 0);
    assert_int_equal(fab_test_expect_word(filler.sock, "ready"), 0);
    char word[64];
    recv_word(filler.sock, word, sizeof(word));
    assert_true(atoi(word) > 0);

    const int timeout_ms = under_valgrind() ? 3000 : 500;
    char env_timeout[64];
    snprintf(env_timeout, sizeof(env_timeout), "FABMEM_TIMEOUT_MS=%d", timeout_ms);
    const char *env[] = {env_timeout, NULL};
    fab_test_child_t victim;
    assert_int_equal(fab_test_spawn("connect_victim", NULL, env, &victim), 0);
    /* Unfixed, the victim's connect() never returns: this wait fails. */
    int answered = fab_test_expect_word(victim.sock, "FAB_ERROR_SYSTEM_NOT_READY");
    if (answered != 0)
        kill(victim.pid, SIGKILL);
    assert_int_equal(answered, 0);
    recv_word(victim.sock, word, sizeof(word));
    int took = atoi(word);
    if (took < timeout_ms * 8 / 10 || took > timeout_ms + 2000)
        fail_msg("connect gave up after %d ms with FABMEM_TIMEOUT_MS=%d", took, timeout_ms);
    assert_int_equal(fab_test_reap(&victim), 0);
    close(filler.sock);
    kill(filler.pid, SIGKILL);
    (void)fab_test_reap(&filler);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(connect_ends_at_the_deadline_when_another_uid_fills_the_backlog,
                              fab_test_teardown),
};

static const fab_test_helper_t helpers[] = {
    {"backlog_filler", helper_backlog_filler},
    {"connect_victim", helper_connect_victim},
};

FAB_TEST_MAIN("fabric", tests, helpers)
