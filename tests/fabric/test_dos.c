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

/* ---- per-uid limits -------------------------------------------------------- */

/* The next word a helper says, as a number. */
static long recv_number(int sock)
{
    char word[64];
    recv_word(sock, word, sizeof(word));
    return strtol(word, NULL, 10);
}

/* helper "ipc_flooder": as uid 65534 (no IMEX channel), IPC_PUBLISH
 * sealed memfds at the daemon of FABMEM_SOCKET until one is refused; says
 * how many were taken and the refusal's status, then holds them until the
 * parent goes. */
static int helper_ipc_flooder(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    if (drop_to_nobody() != 0)
        return 10;
    int daemon = fab_test_raw_hello(getenv("FABMEM_SOCKET"));
    int taken = 0, status = 0;
    for (; taken < 100000; taken++) {
        int fd = -1;
        if (fab__memfd_create("flood", 4096, &fd) != FAB_SUCCESS)
            return 11;
        fab__request_t publish = {.type = FAB__MSG_IPC_PUBLISH, .seq = 2};
        publish.u.ipc_publish.kind = FAB__IPC_KIND_MEM;
        publish.u.ipc_publish.size = 4096;
        status = fab_test_raw_call(daemon, &publish, fd, NULL, NULL);
        close(fd);
        if (status != FAB_SUCCESS)
            break;
    }
    char word[32];
    snprintf(word, sizeof(word), "%d", taken);
    if (fab_test_send_word(sock, word) != 0 ||
        fab_test_send_word(sock, fab_status_name((fab_status_t)status)) != 0)
        return 12;
    char byte;
    while (read(sock, &byte, 1) > 0)
        ;
    close(daemon);
    return 0;
}

/* A uid with no IMEX channel publishes IPC entries until refused: it is
 * refused at max_ipc_entries_per_uid with OUT_OF_MEMORY, logged with the
 * key, and another uid still allocates, imports and publishes. */
static void ipc_entries_count_against_the_publishers_uid(void **state)
{
    (void)state;
    skip_unless_root();
    fab_test_daemon_t *d = fab_test_daemon_start(
        "[daemon]\nsocket_mode = 0666\nmax_ipc_entries_per_uid = 16\n[channel 0]\nuids = 0\n", NULL);
    assert_non_null(d);
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("ipc_flooder", NULL, NULL, &child), 0);
    assert_int_equal(recv_number(child.sock), 16);
    assert_int_equal(fab_test_expect_word(child.sock, "FAB_ERROR_OUT_OF_MEMORY"), 0);
    assert_true(fab_test_daemon_log_contains(d, "max_ipc_entries_per_uid is 16"));
    /* The other uid is served: a fabric allocation, its import, a
     * publish of its own. */
    fab_client_t *client = fab_test_connect_node(NULL);
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    fab_region_t *region, *imported;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_SUCCESS);
    fab_handle_t handle;
    assert_int_equal(fab_region_export(region, &handle), FAB_SUCCESS);
    assert_int_equal(fab_client_import(client, &handle, 0, &imported), FAB_SUCCESS);
    int sock = fab_test_raw_hello(d->socket);
    int fd = -1;
    assert_int_equal(fab__memfd_create("mine", 4096, &fd), FAB_SUCCESS);
    fab__request_t publish = {.type = FAB__MSG_IPC_PUBLISH, .seq = 2};
    publish.u.ipc_publish.kind = FAB__IPC_KIND_MEM;
    publish.u.ipc_publish.size = 4096;
    assert_int_equal(fab_test_raw_call(sock, &publish, fd, NULL, NULL), FAB_SUCCESS);
    close(fd);
    close(sock);
    assert_int_equal(fab_region_release(imported), FAB_SUCCESS);
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
    close(child.sock);
    assert_int_equal(fab_test_reap(&child), 0);
}

/* helper "ref_hoarder": as uid 65534, allocate one FABRIC allocation and
 * import its handle until an import is refused; says how many imports
 * were taken and the refusal's status, then holds them until the parent
 * goes. */
static int helper_ref_hoarder(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    if (drop_to_nobody() != 0)
        return 10;
    int daemon = fab_test_raw_hello(getenv("FABMEM_SOCKET"));
    fab__request_t alloc = {.type = FAB__MSG_ALLOC, .seq = 2};
    alloc.u.alloc.size = MIB2;
    alloc.u.alloc.peer_access = FAB_ACCESS_READ_WRITE;
    alloc.u.alloc.handle_type = FAB_HANDLE_TYPE_FABRIC;
    fab__reply_t reply;
    if (fab_test_raw_call(daemon, &alloc, -1, &reply, NULL) != FAB_SUCCESS)
        return 11;
    fab__request_t import = {.type = FAB__MSG_IMPORT, .seq = 3};
    import.u.import.handle = reply.u.alloc.handle;
    int taken = 0, status = 0;
    for (; taken < 1000000; taken++) {
        status = fab_test_raw_call(daemon, &import, -1, NULL, NULL);
        if (status != FAB_SUCCESS)
            break;
    }
    char word[32];
    snprintf(word, sizeof(word), "%d", taken);
    if (fab_test_send_word(sock, word) != 0 ||
        fab_test_send_word(sock, fab_status_name((fab_status_t)status)) != 0)
        return 12;
    char byte;
    while (read(sock, &byte, 1) > 0)
        ;
    close(daemon);
    return 0;
}

/* One uid imports its own handle over and over: its references stop at
 * max_references_per_uid (its allocation's own reference included), the
 * next import is OUT_OF_MEMORY, logged with the key, and another uid's
 * imports of the same handle are still served. */
static void references_are_bounded_per_uid(void **state)
{
    (void)state;
    skip_unless_root();
    fab_test_daemon_t *d = fab_test_daemon_start(
        "[daemon]\nsocket_mode = 0666\nmax_references_per_uid = 40\nmax_allocations_per_uid = 2\n"
        "max_connections_per_uid = 2\n[channel 0]\nuids = 0, 65534\n", NULL);
    assert_non_null(d);
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("ref_hoarder", NULL, NULL, &child), 0);
    assert_int_equal(recv_number(child.sock), 39);
    assert_int_equal(fab_test_expect_word(child.sock, "FAB_ERROR_OUT_OF_MEMORY"), 0);
    assert_true(fab_test_daemon_log_contains(d, "max_references_per_uid is 40"));
    int sock = fab_test_raw_hello(d->socket);
    fab__request_t stats = {.type = FAB__MSG_STATS, .seq = 2};
    fab__reply_t reply;
    assert_int_equal(fab_test_raw_call(sock, &stats, -1, &reply, NULL), FAB_SUCCESS);
    assert_int_equal(reply.u.stats.references, 40);
    /* The other uid: an allocation of its own, imported 30 times (its own budget). */
    fab_client_t *client = fab_test_connect_node(NULL);
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    fab_region_t *region, *imported[30];
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_SUCCESS);
    fab_handle_t handle;
    assert_int_equal(fab_region_export(region, &handle), FAB_SUCCESS);
    for (int i = 0; i < 30; i++)
        assert_int_equal(fab_client_import(client, &handle, 0, &imported[i]), FAB_SUCCESS);
    for (int i = 0; i < 30; i++)
        assert_int_equal(fab_region_release(imported[i]), FAB_SUCCESS);
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
    close(sock);
    close(child.sock);
    assert_int_equal(fab_test_reap(&child), 0);
}

/* helper "log_flooder" N: as uid 65534, N times each: a connection that
 * sends a malformed message (closed), an IPC_PUBLISH without a memfd
 * (refused), a release of a region it does not hold; says "done". */
static int helper_log_flooder(int argc, char **argv, int sock)
{
    if (argc < 2 || drop_to_nobody() != 0)
        return 10;
    int n = atoi(argv[1]);
    const char *path = getenv("FABMEM_SOCKET");
    int daemon = fab_test_raw_hello(path);
    for (int i = 0; i < n; i++) {
        int bad = fab_test_raw_connect(path);
        if (send(bad, "garbage", 7, MSG_NOSIGNAL) != 7)
            return 11;
        (void)fab_test_raw_reply(bad, NULL, NULL);
        close(bad);
        fab__request_t publish = {.type = FAB__MSG_IPC_PUBLISH, .seq = 2};
        publish.u.ipc_publish.kind = FAB__IPC_KIND_MEM;
        publish.u.ipc_publish.size = 0;
        int fd = -1;
        if (fab__memfd_create("bad", 4096, &fd) != FAB_SUCCESS)
            return 12;
        (void)fab_test_raw_call(daemon, &publish, fd, NULL, NULL);
        close(fd);
        fab__request_t release = {.type = FAB__MSG_RELEASE, .seq = 3};
        release.u.region.region = 424242;
        release.nreleases = 1;
        release.releases[0] = 4242;
        (void)fab_test_raw_call(daemon, &release, -1, NULL, NULL);
    }
    close(daemon);
    return fab_test_send_word(sock, "done") == 0 ? 0 : 13;
}

/* A peer that makes the daemon log as fast as it can (malformed messages
 * on fresh connections, refused IPC_PUBLISHes, releases of regions it does
 * not hold) gets a few lines a second of each, with a count of the rest;
 * another uid's line in the middle of it is still written. */
static void log_lines_a_peer_triggers_are_rate_limited_per_uid(void **state)
{
    (void)state;
    skip_unless_root();
    fab_test_daemon_t *d = fab_test_daemon_start("[daemon]\nsocket_mode = 0666\n", NULL);
    assert_non_null(d);
    enum { N = 600 };
    double start = now_s();
    fab_test_child_t child;
    const char *args[] = {"600", NULL};
    assert_int_equal(fab_test_spawn("log_flooder", args, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "done"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    /* Our own line, right after. */
    int sock = fab_test_raw_hello(d->socket);
    fab__request_t release = {.type = FAB__MSG_RELEASE, .seq = 3};
    release.u.region.region = 1;
    release.nreleases = 1;
    release.releases[0] = 777;
    (void)fab_test_raw_call(sock, &release, -1, NULL, NULL);
    close(sock);
    double elapsed = now_s() - start;
    char mine[64];
    snprintf(mine, sizeof(mine), "released region 777");
    assert_int_equal(fab_test_daemon_log_count(d, mine), 1);
    static const char *const kinds[] = {"a malformed message", "IPC_PUBLISH by pid",
                                        "released region 4242"};
    int most = 5 * (2 + (int)elapsed);
    for (size_t k = 0; k < 3; k++) {
        int lines = fab_test_daemon_log_count(d, kinds[k]);
        if (lines < 1 || lines > most)
            fail_msg("%d lines of \"%s\" for %d triggers in %.2f s", lines, kinds[k], N, elapsed);
    }
    if (elapsed < 1.0 || fab_test_daemon_log_contains(d, "more like it in the last second"))
        return;
    fail_msg("no line says how many were held back");
}

/* helper "fd_hoarder" N: as uid 65534, receive a handle; on one connection
 * send N IMPORTs of it without reading a reply; say "sent"; once told
 * "read", read the N replies and say how many brought an fd, then what one
 * more import says now that nothing is unread. */
static int helper_fd_hoarder(int argc, char **argv, int sock)
{
    if (argc < 2 || drop_to_nobody() != 0)
        return 10;
    int n = atoi(argv[1]);
    int daemon = fab_test_raw_hello(getenv("FABMEM_SOCKET"));
    fab__request_t import = {.type = FAB__MSG_IMPORT, .seq = 3};
    if (fab_test_send_word(sock, "ready") != 0 ||
        fab_test_recv(sock, import.u.import.handle.bytes, FAB_HANDLE_BYTES) != 0)
        return 11;
    for (int i = 0; i < n; i++)
        fab_test_raw_send(daemon, &import, -1);
    if (fab_test_send_word(sock, "sent") != 0 || fab_test_expect_word(sock, "read") != 0)
        return 12;
    int with_fd = 0;
    for (int i = 0; i < n; i++) {
        int fd = -1;
        int status = fab_test_raw_reply(daemon, NULL, &fd);
        if (status == FAB_SUCCESS && fd >= 0)
            with_fd++;
        else if (status != FAB_ERROR_OUT_OF_MEMORY)
            return 13;
        if (fd >= 0)
            close(fd);
    }
    char word[32];
    snprintf(word, sizeof(word), "%d", with_fd);
    int fd = -1;
    int status = fab_test_raw_call(daemon, &import, -1, NULL, &fd);
    if (fd >= 0)
        close(fd);
    if (fab_test_send_word(sock, word) != 0 ||
        fab_test_send_word(sock, fab_status_name((fab_status_t)status)) != 0)
        return 14;
    close(daemon);
    return 0;
}

/* Global STATS (root's view) until references reach want, or the test's
 * deadline: the last count. */
static uint64_t references_settled(int sock, uint64_t want)
{
    double deadline = now_s() + FAB_TEST_TIMEOUT_MS / 1000.0;
    fab__request_t stats = {.type = FAB__MSG_STATS, .seq = 2};
    fab__reply_t reply;
    do
        assert_int_equal(fab_test_raw_call(sock, &stats, -1, &reply, NULL), FAB_SUCCESS);
    while (reply.u.stats.references != want && now_s() < deadline);
    return reply.u.stats.references;
}

/* A uid that leaves fd-carrying replies unread gets at most
 * max_fds_in_flight_per_uid of them in flight: the rest are undone and
 * answered OUT_OF_MEMORY (logged with the key), while another uid imports
 * as before; once it has read them, it is served again. */
static void fds_in_flight_are_bounded_per_uid(void **state)
{
    (void)state;
    skip_unless_root();
    enum { LIMIT = 8 };
    fab_test_daemon_t *d = fab_test_daemon_start(
        "[daemon]\nsocket_mode = 0666\nmax_fds_in_flight_per_uid = 8\n"
        "[channel 0]\nuids = 0, 65534\n", NULL);
    assert_non_null(d);
    fab_client_t *client = fab_test_connect_node(NULL);
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    fab_region_t *region, *imported;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_SUCCESS);
    fab_handle_t handle;
    assert_int_equal(fab_region_export(region, &handle), FAB_SUCCESS);
    fab_test_child_t child;
    const char *args[] = {"12", NULL}; /* 4 more than it may have in flight */
    assert_int_equal(fab_test_spawn("fd_hoarder", args, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send(child.sock, handle.bytes, FAB_HANDLE_BYTES), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "sent"), 0);
    /* The daemon answers one client's queued requests in one turn: once
     * the imports that went out are counted, every one was answered. */
    int watcher = fab_test_raw_hello(d->socket);
    assert_int_equal(references_settled(watcher, 1 + LIMIT), 1 + LIMIT);
    assert_true(fab_test_daemon_log_contains(d, "max_fds_in_flight_per_uid is 8"));
    /* Our uid's imports are not held up by what the other leaves unread. */
    for (int i = 0; i < LIMIT + 4; i++) {
        assert_int_equal(fab_client_import(client, &handle, 0, &imported), FAB_SUCCESS);
        assert_int_equal(fab_region_release(imported), FAB_SUCCESS);
    }
    assert_int_equal(fab_test_send_word(child.sock, "read"), 0);
    assert_int_equal(recv_number(child.sock), LIMIT);
    assert_int_equal(fab_test_expect_word(child.sock, "FAB_SUCCESS"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    close(watcher);
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

/* helper "fd_leaver" N: as uid 65534, receive a handle, send N IMPORTs on
 * a connection without reading, then a malformed message (the daemon ends
 * the connection); say "sent"; once told "read", read what came and say
 * how many fds. */
static int helper_fd_leaver(int argc, char **argv, int sock)
{
    if (argc < 2 || drop_to_nobody() != 0)
        return 10;
    int n = atoi(argv[1]);
    int daemon = fab_test_raw_hello(getenv("FABMEM_SOCKET"));
    fab__request_t import = {.type = FAB__MSG_IMPORT, .seq = 3};
    if (fab_test_send_word(sock, "ready") != 0 ||
        fab_test_recv(sock, import.u.import.handle.bytes, FAB_HANDLE_BYTES) != 0)
        return 11;
    for (int i = 0; i < n; i++)
        fab_test_raw_send(daemon, &import, -1);
    if (send(daemon, "garbage", 7, MSG_NOSIGNAL) != 7)
        return 12;
    if (fab_test_send_word(sock, "sent") != 0 || fab_test_expect_word(sock, "read") != 0)
        return 13;
    int with_fd = 0, fd = -1;
    while (fab_test_raw_reply(daemon, NULL, &fd) == FAB_SUCCESS) {
        with_fd += fd >= 0;
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    char word[32];
    snprintf(word, sizeof(word), "%d", with_fd);
    if (fab_test_send_word(sock, word) != 0)
        return 14;
    char byte;
    while (read(sock, &byte, 1) > 0)
        ;
    close(daemon);
    return 0;
}

/* The daemon closing a connection (a malformed message) does not take its
 * unread fds out of flight: the kernel keeps them queued for the peer. So
 * such a connection lingers, still counted, until the peer has read them:
 * closing and reconnecting does not multiply what one uid keeps in
 * flight. */
static void a_connection_ended_with_fds_unread_still_counts_them(void **state)
{
    (void)state;
    skip_unless_root();
    enum { LIMIT = 8 };
    fab_test_daemon_t *d = fab_test_daemon_start(
        "[daemon]\nsocket_mode = 0666\nmax_fds_in_flight_per_uid = 8\n"
        "[channel 0]\nuids = 0, 65534\n", NULL);
    assert_non_null(d);
    fab_client_t *client = fab_test_connect_node(NULL);
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    fab_region_t *region;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_SUCCESS);
    fab_handle_t handle;
    assert_int_equal(fab_region_export(region, &handle), FAB_SUCCESS);
    fab_test_child_t leaver, hoarder;
    const char *six[] = {"6", NULL};
    assert_int_equal(fab_test_spawn("fd_leaver", six, NULL, &leaver), 0);
    assert_int_equal(fab_test_expect_word(leaver.sock, "ready"), 0);
    assert_int_equal(fab_test_send(leaver.sock, handle.bytes, FAB_HANDLE_BYTES), 0);
    assert_int_equal(fab_test_expect_word(leaver.sock, "sent"), 0);
    int watcher = fab_test_raw_hello(d->socket);
    /* Its references went with the connection; its 6 fds are in flight. */
    assert_int_equal(references_settled(watcher, 1), 1);
    /* Another connection of the same uid gets only the 2 left. */
    assert_int_equal(fab_test_spawn("fd_hoarder", six, NULL, &hoarder), 0);
    assert_int_equal(fab_test_expect_word(hoarder.sock, "ready"), 0);
    assert_int_equal(fab_test_send(hoarder.sock, handle.bytes, FAB_HANDLE_BYTES), 0);
    assert_int_equal(fab_test_expect_word(hoarder.sock, "sent"), 0);
    assert_int_equal(references_settled(watcher, 1 + LIMIT - 6), 1 + LIMIT - 6);
    assert_int_equal(fab_test_send_word(hoarder.sock, "read"), 0);
    assert_int_equal(recv_number(hoarder.sock), LIMIT - 6);
    assert_int_equal(fab_test_expect_word(hoarder.sock, "FAB_SUCCESS"), 0);
    assert_int_equal(fab_test_reap(&hoarder), 0);
    /* The leaver reads its 6; then the daemon lets its connection go, while
     * the leaver still holds its end: only ours and the watcher stay. */
    assert_int_equal(fab_test_send_word(leaver.sock, "read"), 0);
    assert_int_equal(recv_number(leaver.sock), 6);
    double deadline = now_s() + FAB_TEST_TIMEOUT_MS / 1000.0;
    fab__request_t stats = {.type = FAB__MSG_STATS, .seq = 2};
    fab__reply_t reply;
    do
        assert_int_equal(fab_test_raw_call(watcher, &stats, -1, &reply, NULL), FAB_SUCCESS);
    while (reply.u.stats.clients != 2 && now_s() < deadline);
    assert_int_equal(reply.u.stats.clients, 2);
    close(leaver.sock);
    assert_int_equal(fab_test_reap(&leaver), 0);
    close(watcher);
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(fds_in_flight_are_bounded_per_uid, fab_test_teardown),
    cmocka_unit_test_teardown(a_connection_ended_with_fds_unread_still_counts_them,
                              fab_test_teardown),
    cmocka_unit_test_teardown(ipc_entries_count_against_the_publishers_uid, fab_test_teardown),
    cmocka_unit_test_teardown(references_are_bounded_per_uid, fab_test_teardown),
    cmocka_unit_test_teardown(log_lines_a_peer_triggers_are_rate_limited_per_uid, fab_test_teardown),
    cmocka_unit_test_teardown(connect_ends_at_the_deadline_when_another_uid_fills_the_backlog,
                              fab_test_teardown),
};

static const fab_test_helper_t helpers[] = {
    {"backlog_filler", helper_backlog_filler},
    {"connect_victim", helper_connect_victim},
    {"ipc_flooder", helper_ipc_flooder},
    {"ref_hoarder", helper_ref_hoarder},
    {"log_flooder", helper_log_flooder},
    {"fd_hoarder", helper_fd_hoarder},
    {"fd_leaver", helper_fd_leaver},
};

FAB_TEST_MAIN("fabric", tests, helpers)
