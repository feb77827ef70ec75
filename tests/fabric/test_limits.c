/* What one user, one connection or one request can take from the daemon, and
 * what the daemon's start and options refuse: the per-uid limits on
 * connections, allocations and bytes (others are served meanwhile), STATS and
 * VERIFY seen by another user, a client that never reads the replies that
 * carry fds, a reply whose fd the kernel will not carry, a stopped daemon and
 * the client's deadline, a state file that is a FIFO, and options that are no
 * numbers.
 *
 * Raw connections speak the wire protocol directly (proto.h), as in
 * test_badinput.c; the tests that need a second uid drop to 65534 in a
 * helper (as test_rules.c does) and skip unless run as root. */
#include "daemon_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/sockios.h>

#include "fabmem.h"
#include "src/common/proto.h"

#define MIB2 (2u * 1024 * 1024)
#define NOBODY 65534

/* ---- raw protocol (as in test_badinput.c) ---------------------------------- */

static fab_daemon_stats_t raw_stats(int sock)
{
    fab__request_t request = {.type = FAB__MSG_STATS, .seq = 2};
    fab_test_raw_send(sock, &request, -1);
    fab__reply_t reply;
    assert_int_equal(fab_test_raw_reply(sock, &reply, NULL), FAB_SUCCESS);
    const fab__stats_t *st = &reply.u.stats;
    return (fab_daemon_stats_t){.pid = st->pid,
                                .clients = st->clients,
                                .allocations = st->allocations,
                                .references = st->references,
                                .bytes = st->bytes,
                                .rss = st->rss};
}

/* Every reply has the same length. */
static size_t reply_len(void)
{
    /* As sent to a client that said this version's HELLO: with the kind. */
    fab__reply_t reply = {.type = FAB__MSG_IMPORT};
    reply.u.import.kind = FAB__MEMORY_PLAIN;
    uint8_t buf[FAB__PROTO_MAX];
    return fab__reply_encode(&reply, buf);
}

/* Send IMPORT requests for handle without reading a reply, until the socket
 * would block or max went out; returns how many went. */
/* Up to max requests that import handle, never reading a reply: IMPORTs
 * when batch is 0, else IMPORT_MANYs of batch copies of it. How many went. */
static int raw_flood(int sock, const fab_handle_t *handle, int max, unsigned batch)
{
    fab__request_t import;
    memset(&import, 0, sizeof(import));
    import.seq = 3;
    if (batch == 0) {
        import.type = FAB__MSG_IMPORT;
        import.u.import.handle = *handle;
    } else {
        import.type = FAB__MSG_IMPORT_MANY;
        import.u.import_many.count = (uint8_t)batch;
        for (unsigned i = 0; i < batch; i++)
            import.handles[i] = *handle;
    }
    uint8_t buf[FAB__PROTO_MAX];
    size_t len = fab__request_encode(&import, buf);
    int sent = 0;
    while (sent < max && send(sock, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)len)
        sent++;
    if (sent < max && errno != EAGAIN && errno != EWOULDBLOCK)
        fail_msg("request %d of a client that does not read: %s", sent + 1, strerror(errno));
    return sent;
}

static int raw_flood_imports(int sock, const fab_handle_t *handle, int max)
{
    return raw_flood(sock, handle, max, 0);
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

/* ---- helpers that run as another user --------------------------------------- */

static int drop_to_nobody(void)
{
    if (getuid() != 0)
        return 0;
    return setgroups(0, NULL) == 0 && setgid(NOBODY) == 0 && setuid(NOBODY) == 0 ? 0 : -1;
}

/* helper "nobody_allocates": as 65534, connect and allocate 2 MiB; say the
 * status as a word; on success send its fab_client_stats figures, then hold
 * the allocation until told "go". */
static int helper_nobody_allocates(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    if (drop_to_nobody() != 0)
        return 10;
    fab_client_t *client;
    fab_status_t status = fab_client_connect(NULL, &client);
    if (status != FAB_SUCCESS)
        return fab_test_send_word(sock, fab_status_name(status)) == 0 ? 0 : 11;
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    fab_region_t *region;
    status = fab_client_allocate(client, &props, &region);
    if (fab_test_send_word(sock, fab_status_name(status)) != 0)
        return 12;
    if (status == FAB_SUCCESS) {
        fab_daemon_stats_t stats;
        memset(&stats, 0xff, sizeof(stats));
        if (fab_client_stats(client, &stats) != FAB_SUCCESS ||
            fab_test_send(sock, &stats, sizeof(stats)) != 0 || fab_test_expect_word(sock, "go") != 0)
            return 13;
        fab_region_release(region);
    }
    return fab_client_close(client) == FAB_SUCCESS ? 0 : 14;
}

/* helper "nobody_verifies": as 65534, verify the handle it is sent; say the
 * status, then "live" or "not live". */
static int helper_nobody_verifies(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    if (drop_to_nobody() != 0)
        return 10;
    fab_client_t *client;
    fab_status_t status = fab_client_connect(NULL, &client);
    if (status != FAB_SUCCESS)
        return fab_test_send_word(sock, fab_status_name(status)) == 0 ? 0 : 11;
    fab_handle_t handle;
    if (fab_test_send_word(sock, "ready") != 0 ||
        fab_test_recv(sock, handle.bytes, sizeof(handle.bytes)) != 0)
        return 12;
    bool live = false;
    status = fab_client_verify(client, &handle, &live);
    if (fab_test_send_word(sock, fab_status_name(status)) != 0 ||
        fab_test_send_word(sock, live ? "live" : "not live") != 0)
        return 13;
    return fab_client_close(client) == FAB_SUCCESS ? 0 : 14;
}

/* helper "nobody_holds": as 65534, allocate 2 MiB, map it and write a
 * pattern, send "ready" and the handle; then, for each "import" it is told,
 * import the handle and say the status, then the status of a STATS call,
 * then "readable" if the first mapping still reads back; "done" ends it. */
static int helper_nobody_holds(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    if (drop_to_nobody() != 0)
        return 10;
    fab_client_t *client;
    fab_status_t status = fab_client_connect(NULL, &client);
    if (status != FAB_SUCCESS)
        return fab_test_send_word(sock, fab_status_name(status)) == 0 ? 0 : 11;
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    fab_region_t *region;
    fab_handle_t handle;
    unsigned char *p;
    if (fab_client_allocate(client, &props, &region) != FAB_SUCCESS ||
        fab_region_export(region, &handle) != FAB_SUCCESS ||
        fab_region_map(region, FAB_ACCESS_READ_WRITE, (void **)&p) != FAB_SUCCESS)
        return 12;
    for (size_t i = 0; i < MIB2; i += 4096)
        p[i] = (unsigned char)(i / 4096);
    if (fab_test_send_word(sock, "ready") != 0 ||
        fab_test_send(sock, handle.bytes, sizeof(handle.bytes)) != 0)
        return 13;
    for (;;) {
        uint8_t len;
        char word[256];
        if (fab_test_recv(sock, &len, 1) != 0 || fab_test_recv(sock, word, len) != 0)
            return 14;
        word[len] = '\0';
        if (strcmp(word, "done") == 0)
            break;
        fab_region_t *imported;
        status = fab_client_import(client, &handle, 0, &imported);
        if (status == FAB_SUCCESS)
            fab_region_release(imported);
        fab_daemon_stats_t stats;
        fab_status_t stats_status = fab_client_stats(client, &stats);
        int readable = 1;
        for (size_t i = 0; i < MIB2; i += 4096)
            readable &= p[i] == (unsigned char)(i / 4096);
        if (fab_test_send_word(sock, fab_status_name(status)) != 0 ||
            fab_test_send_word(sock, fab_status_name(stats_status)) != 0 ||
            fab_test_send_word(sock, readable ? "readable" : "changed") != 0)
            return 15;
    }
    fab_region_unmap(region, p);
    fab_region_release(region);
    return fab_client_close(client) == FAB_SUCCESS ? 0 : 16;
}

/* Run nobody_allocates against the current daemon and expect want. */
static void nobody_allocates(const char *want)
{
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("nobody_allocates", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, want), 0);
    if (strcmp(want, "FAB_SUCCESS") == 0) {
        fab_daemon_stats_t stats;
        assert_int_equal(fab_test_recv(child.sock, &stats, sizeof(stats)), 0);
        assert_int_equal(fab_test_send_word(child.sock, "go"), 0);
    }
    assert_int_equal(fab_test_reap(&child), 0);
}

/* ---- connections ---------------------------------------------------------------- */

/* Poll (with a deadline) until the daemon counts want connections in all;
 * sock is a connection of root or of the daemon's uid (global figures). */
static void wait_for_clients(int sock, uint64_t want)
{
    double deadline = now_s() + FAB_TEST_TIMEOUT_MS / 1000.0;
    fab_daemon_stats_t stats = raw_stats(sock);
    while (stats.clients != want && now_s() < deadline)
        stats = raw_stats(sock);
    assert_int_equal(stats.clients, want);
}

static void connections_over_the_uid_limit_are_closed_at_once(void **state)
{
    (void)state;
    enum { LIMIT = 4, MORE = 50 };
    char config[128];
    snprintf(config, sizeof(config), "[daemon]\nmax_connections_per_uid = %d\n"
             "[channel 0]\nuids = %lu\n", LIMIT, (unsigned long)getuid());
    fab_test_daemon_t *daemon = fab_test_daemon_start(config, NULL);
    assert_non_null(daemon);
    int held[LIMIT];
    for (int i = 0; i < LIMIT; i++) {
        held[i] = fab_test_raw_connect(daemon->socket);
        fab_test_raw_say_hello(held[i]);
    }
    /* The fifth is closed without a word, and so are fifty more. */
    double start = now_s();
    int fifth = fab_test_raw_connect(daemon->socket);
    assert_int_equal(fab_test_raw_reply(fifth, NULL, NULL), -1);
    close(fifth);
    int more[MORE];
    for (int i = 0; i < MORE; i++)
        more[i] = fab_test_raw_connect(daemon->socket);
    for (int i = 0; i < MORE; i++) {
        assert_int_equal(fab_test_raw_reply(more[i], NULL, NULL), -1);
        close(more[i]);
    }
    /* The library says the daemon is not ready for us (it tries twice). */
    fab_client_t *client = NULL;
    assert_int_equal(fab_client_connect(NULL, &client), FAB_ERROR_SYSTEM_NOT_READY);
    double elapsed = now_s() - start;
    /* The ones it holds are served as before. */
    fab_daemon_stats_t stats = raw_stats(held[0]);
    assert_int_equal(stats.clients, LIMIT);
    /* The log says why, but not once per refusal: one line a second at
     * most for 53 refusals. */
    assert_true(fab_test_daemon_log_contains(daemon, "max_connections_per_uid is 4"));
    int lines = fab_test_daemon_log_count(daemon, "max_connections_per_uid");
    if (lines < 1 || lines > 2 + (int)elapsed)
        fail_msg("%d log lines for %d refusals in %.2f s", lines, MORE + 3, elapsed);
    /* One goes: once the daemon has seen it go, a new one is served. */
    close(held[LIMIT - 1]);
    wait_for_clients(held[0], LIMIT - 1);
    held[LIMIT - 1] = fab_test_raw_connect(daemon->socket);
    fab_test_raw_say_hello(held[LIMIT - 1]);
    stats = raw_stats(held[LIMIT - 1]);
    assert_int_equal(stats.clients, LIMIT);
    /* And at the limit again, the next is refused again. */
    fifth = fab_test_raw_connect(daemon->socket);
    assert_int_equal(fab_test_raw_reply(fifth, NULL, NULL), -1);
    close(fifth);
    for (int i = 0; i < LIMIT; i++)
        close(held[i]);
}

static void another_uid_is_served_while_one_uid_is_at_its_connection_limit(void **state)
{
    (void)state;
    enum { LIMIT = 4 };
    if (getuid() != 0)
        fab_test_skip("needs a second uid");
    fab_test_daemon_t *daemon = fab_test_daemon_start(
        "[daemon]\nsocket_mode = 0666\nmax_connections_per_uid = 4\n"
        "[channel 0]\nuids = 0, 65534\n", NULL);
    assert_non_null(daemon);
    int held[LIMIT];
    for (int i = 0; i < LIMIT; i++) {
        held[i] = fab_test_raw_connect(daemon->socket);
        fab_test_raw_say_hello(held[i]);
    }
    for (int i = 0; i < 8; i++) {
        int sock = fab_test_raw_connect(daemon->socket);
        assert_int_equal(fab_test_raw_reply(sock, NULL, NULL), -1);
        close(sock);
    }
    nobody_allocates("FAB_SUCCESS");
    /* Root is still at its limit. */
    int sock = fab_test_raw_connect(daemon->socket);
    assert_int_equal(fab_test_raw_reply(sock, NULL, NULL), -1);
    close(sock);
    for (int i = 0; i < LIMIT; i++)
        close(held[i]);
}

/* ---- allocations and bytes ------------------------------------------------------ */

/* With config's limit, allowed 2 MiB allocations succeed and the next is
 * OUT_OF_MEMORY (the log names limit_key); releasing one makes room for one;
 * as root, another uid sharing the channel allocates while root is at its
 * limit. */
static void allocations_up_to(const char *limit_line, const char *limit_key, int allowed)
{
    char config[256];
    snprintf(config, sizeof(config), "[daemon]\nsocket_mode = 0666\n%s\n"
             "[channel 0]\nuids = %lu, 65534\n", limit_line, (unsigned long)getuid());
    fab_test_daemon_t *daemon = fab_test_daemon_start(config, NULL);
    assert_non_null(daemon);
    fab_client_t *client;
    assert_int_equal(fab_client_connect(NULL, &client), FAB_SUCCESS);
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    fab_region_t *regions[8];
    for (int i = 0; i < allowed; i++)
        assert_int_equal(fab_client_allocate(client, &props, &regions[i]), FAB_SUCCESS);
    fab_region_t *over;
    assert_int_equal(fab_client_allocate(client, &props, &over), FAB_ERROR_OUT_OF_MEMORY);
    assert_int_equal(fab_client_allocate(client, &props, &over), FAB_ERROR_OUT_OF_MEMORY);
    assert_true(fab_test_daemon_log_contains(daemon, limit_key));
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
    assert_int_equal(stats.allocations, (uint64_t)allowed);
    assert_int_equal(stats.references, (uint64_t)allowed);
    /* The refusal cost nothing: the connection still works, and a release
     * makes room for exactly one more. */
    assert_int_equal(fab_region_release(regions[0]), FAB_SUCCESS);
    assert_int_equal(fab_client_allocate(client, &props, &regions[0]), FAB_SUCCESS);
    assert_int_equal(fab_client_allocate(client, &props, &over), FAB_ERROR_OUT_OF_MEMORY);
    if (getuid() == 0)
        nobody_allocates("FAB_SUCCESS"); /* the limit is root's, not everyone's */
    for (int i = 0; i < allowed; i++)
        assert_int_equal(fab_region_release(regions[i]), FAB_SUCCESS);
    assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
    assert_int_equal(stats.allocations, 0);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static void allocations_over_the_uid_limit_are_out_of_memory(void **state)
{
    (void)state;
    allocations_up_to("max_allocations_per_uid = 3", "max_allocations_per_uid is 3", 3);
}

static void bytes_over_the_uid_limit_are_out_of_memory(void **state)
{
    (void)state;
    allocations_up_to("max_bytes_per_uid = 4M", "max_bytes_per_uid is 4194304", 2);
}

/* ---- what another user sees --------------------------------------------------- */

static void stats_show_other_users_only_their_own_figures(void **state)
{
    (void)state;
    if (getuid() != 0)
        fab_test_skip("needs a second uid");
    fab_test_daemon_t *daemon = fab_test_daemon_start(
        "[daemon]\nsocket_mode = 0666\n[channel 0]\nuids = 0, 65534\n", NULL);
    assert_non_null(daemon);
    fab_client_t *client;
    assert_int_equal(fab_client_connect(NULL, &client), FAB_SUCCESS);
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    fab_region_t *a, *b;
    assert_int_equal(fab_client_allocate(client, &props, &a), FAB_SUCCESS);
    assert_int_equal(fab_client_allocate(client, &props, &b), FAB_SUCCESS);

    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("nobody_allocates", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "FAB_SUCCESS"), 0);
    fab_daemon_stats_t theirs;
    assert_int_equal(fab_test_recv(child.sock, &theirs, sizeof(theirs)), 0);
    /* Its own uid's figures, nothing of root's, and not the daemon's rss. */
    assert_int_equal(theirs.pid, (uint64_t)daemon->pid);
    assert_int_equal(theirs.clients, 1);
    assert_int_equal(theirs.allocations, 1);
    assert_int_equal(theirs.references, 1);
    assert_int_equal(theirs.bytes, MIB2);
    assert_int_equal(theirs.rss, 0);
    /* Root sees everything, while the helper still holds its allocation. */
    fab_daemon_stats_t all;
    assert_int_equal(fab_client_stats(client, &all), FAB_SUCCESS);
    assert_int_equal(all.clients, 2);
    assert_int_equal(all.allocations, 3);
    assert_int_equal(all.references, 3);
    assert_int_equal(all.bytes, 3 * (uint64_t)MIB2);
    assert_true(all.rss > 0);
    assert_int_equal(fab_test_send_word(child.sock, "go"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    fab_region_release(a);
    fab_region_release(b);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

/* Root allocates and exports on the daemon just started; the helper (65534)
 * verifies the handle and must say want_status, want_live. */
static void nobody_verifies(const char *want_status, const char *want_live)
{
    fab_client_t *client;
    assert_int_equal(fab_client_connect(NULL, &client), FAB_SUCCESS);
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    fab_region_t *region;
    fab_handle_t handle;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_SUCCESS);
    assert_int_equal(fab_region_export(region, &handle), FAB_SUCCESS);
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("nobody_verifies", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send(child.sock, handle.bytes, sizeof(handle.bytes)), 0);
    assert_int_equal(fab_test_expect_word(child.sock, want_status), 0);
    assert_int_equal(fab_test_expect_word(child.sock, want_live), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    fab_region_release(region);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static void verify_needs_a_channel_shared_with_the_creator(void **state)
{
    (void)state;
    if (getuid() != 0)
        fab_test_skip("needs a second uid");
    /* A channel each, none shared: the handle's liveness is none of its
     * business. */
    assert_non_null(fab_test_daemon_start("[daemon]\nsocket_mode = 0666\n"
                                      "[channel 0]\nuids = 0\n[channel 1]\nuids = 65534\n", NULL));
    nobody_verifies("FAB_ERROR_NOT_PERMITTED", "not live");
    /* One channel for both. */
    assert_non_null(fab_test_daemon_start("[daemon]\nsocket_mode = 0666\n"
                                      "[channel 0]\nuids = 0, 65534\n", NULL));
    nobody_verifies("FAB_SUCCESS", "live");
}

/* ---- replies in flight ------------------------------------------------------------ */

/* Poll (with a deadline) until three STATS in a row show the same number of
 * references: the daemon serves every readable client once per turn of its
 * loop, so a flooder it still reads would have added one in between. */
static uint64_t settled_references(int (*stats_fn)(void *, fab_daemon_stats_t *), void *arg)
{
    double deadline = now_s() + FAB_TEST_TIMEOUT_MS / 1000.0;
    fab_daemon_stats_t stats;
    assert_int_equal(stats_fn(arg, &stats), 0);
    uint64_t last = stats.references;
    int same = 0;
    while (same < 3 && now_s() < deadline) {
        assert_int_equal(stats_fn(arg, &stats), 0);
        same = stats.references == last ? same + 1 : 0;
        last = stats.references;
    }
    assert_int_equal(same, 3);
    return last;
}

static int client_stats(void *client, fab_daemon_stats_t *stats)
{
    return fab_client_stats(client, stats) == FAB_SUCCESS ? 0 : -1;
}

static int sock_stats(void *sock, fab_daemon_stats_t *stats)
{
    *stats = raw_stats(*(int *)sock);
    return 0;
}

static void client_that_never_reads_its_fd_replies_holds_only_a_few_in_flight(void **state)
{
    (void)state;
    enum { REQUESTS = 200, CAP = 24 };
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    int baseline = fab_test_daemon_fd_count(daemon);
    fab_client_t *client;
    assert_int_equal(fab_client_connect(NULL, &client), FAB_SUCCESS);
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    fab_region_t *region;
    fab_handle_t handle;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_SUCCESS);
    assert_int_equal(fab_region_export(region, &handle), FAB_SUCCESS);

    int flooder = fab_test_raw_connect(daemon->socket);
    fab_test_raw_say_hello(flooder);
    int sent = raw_flood_imports(flooder, &handle, REQUESTS);
    assert_true(sent > 2 * CAP); /* else this proves nothing */
    /* Each IMPORT the daemon answered is a reference: once it has stopped
     * reading the flooder, they stop growing, at a handful. */
    uint64_t refs = settled_references(client_stats, client);
    uint64_t answered = refs - 1; /* the creator's is ours */
    if (answered < 1 || answered > CAP)
        fail_msg("the daemon answered %llu of %d IMPORTs the flooder never read",
                 (unsigned long long)answered, sent);
    /* What waits for the flooder: whole replies, all but perhaps one (still
     * in the daemon, waiting for room) of those answered; and the daemon
     * has requests of ours left that it does not read. */
    int queued_bytes = -1, unread = -1;
    assert_int_equal(ioctl(flooder, SIOCINQ, &queued_bytes), 0);
    assert_int_equal(ioctl(flooder, SIOCOUTQ, &unread), 0);
    assert_true(unread > 0);
    assert_int_equal(queued_bytes % (int)reply_len(), 0);
    uint64_t queued = (uint64_t)queued_bytes / reply_len();
    if (queued + 1 != answered && queued != answered)
        fail_msg("%llu replies queued for %llu IMPORTs answered", (unsigned long long)queued,
                 (unsigned long long)answered);
    /* Each of them carries its fd. */
    for (uint64_t i = 0; i < queued; i++) {
        fab__reply_t reply;
        int fd = -1;
        assert_int_equal(fab_test_raw_reply(flooder, &reply, &fd), FAB_SUCCESS);
        assert_int_equal(reply.type, FAB__MSG_IMPORT);
        assert_true(fd >= 0);
        close(fd);
    }
    /* The flooder goes: every reference it was handed goes with it. */
    close(flooder);
    double deadline = now_s() + FAB_TEST_TIMEOUT_MS / 1000.0;
    fab_daemon_stats_t stats;
    do
        assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
    while ((stats.references != 1 || stats.clients != 1) && now_s() < deadline);
    assert_int_equal(stats.references, 1);
    assert_int_equal(stats.clients, 1);
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
    assert_int_equal(fab_test_daemon_fd_count_settled(daemon, baseline), baseline);
}

/* Connections that never read flood the daemon with imports (batch 0:
 * IMPORTs; else IMPORT_MANYs of batch handles) until more fds would be in
 * flight than its RLIMIT_NOFILE: the replies that cannot carry their fds are
 * undone and fail, and a well-behaved client's import fails alone, if at
 * all. */
static void replies_whose_fds_cannot_travel_fail_alone(unsigned batch)
{
    enum { NOFILE = 48, FLOODERS = 12, PER_FLOODER = 64 };
    if (under_valgrind())
        /* The test runs under valgrind too, which emulates setrlimit for it:
         * the daemon started from it keeps the large limit, and the kernel's
         * limit on fds in flight never applies. */
        fab_test_skip("under valgrind the kernel's limit on fds in flight never applies");
    /* The daemon must not run as root, which may send any number of fds:
     * as root, start it as 65534; else it runs as the test's own uid. */
    unsigned long uid = getuid() == 0 ? NOBODY : getuid();
    char config[160];
    snprintf(config, sizeof(config), "[daemon]\nsocket_mode = 0666\nmax_connections_per_uid = 16\n"
             "[channel 0]\nuids = %lu, %lu\n", (unsigned long)getuid(), uid);
    fab_test_daemon_uid = getuid() == 0 ? NOBODY : 0;
    fab_test_daemon_nofile = NOFILE;
    fab_test_daemon_t *daemon = fab_test_daemon_start(config, NULL);
    fab_test_daemon_uid = 0;
    fab_test_daemon_nofile = 0;
    assert_non_null(daemon);

    /* A well-behaved client of the daemon's uid (a client trusts a daemon of
     * its own uid or root's only; drop_to_nobody leaves a non-root helper
     * as it is) holds a region, mapped. */
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("nobody_holds", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    fab_handle_t handle;
    assert_int_equal(fab_test_recv(child.sock, handle.bytes, sizeof(handle.bytes)), 0);

    /* The test floods with IMPORTs of it from connections that never read,
     * until more fds would be in flight than the daemon's RLIMIT_NOFILE. */
    int watcher = fab_test_raw_connect(daemon->socket);
    fab_test_raw_say_hello(watcher);
    int flooders[FLOODERS];
    for (int i = 0; i < FLOODERS; i++) {
        flooders[i] = fab_test_raw_connect(daemon->socket);
        fab_test_raw_say_hello(flooders[i]);
        assert_true(raw_flood(flooders[i], &handle, PER_FLOODER, batch) > 0);
    }
    double deadline = now_s() + FAB_TEST_TIMEOUT_MS / 1000.0;
    while (!fab_test_daemon_log_contains(daemon, "could not carry its fd") && now_s() < deadline)
        (void)raw_stats(watcher);
    assert_true(fab_test_daemon_log_contains(daemon, "could not carry its fd"));
    /* Undone: no reference is held for a reply that went without its fd;
     * all that is held is the helper's, what is in flight, and what waits in
     * the daemon (a reply per flooder, each with a batch's worth of imports).
     * The kernel refuses a message once the fds in flight exceed the limit,
     * so the last one it took may overshoot it by its own fds less one. */
    unsigned per = batch ? batch : 1;
    uint64_t refs = settled_references(sock_stats, &watcher);
    if (refs > 1 + NOFILE + per + FLOODERS * per)
        fail_msg("%llu references held with at most %u fds in flight and %u waiting",
                 (unsigned long long)refs, NOFILE + per, FLOODERS * per);

    /* The well-behaved client's import fails alone, if at all: its
     * connection stays, and so does its mapping. */
    assert_int_equal(fab_test_send_word(child.sock, "import"), 0);
    uint8_t len;
    char word[256];
    assert_int_equal(fab_test_recv(child.sock, &len, 1), 0);
    assert_int_equal(fab_test_recv(child.sock, word, len), 0);
    word[len] = '\0';
    if (strcmp(word, "FAB_SUCCESS") != 0 && strcmp(word, "FAB_ERROR_OUT_OF_MEMORY") != 0)
        fail_msg("the import while fds could not travel said %s", word);
    assert_int_equal(fab_test_expect_word(child.sock, "FAB_SUCCESS"), 0); /* its STATS */
    assert_int_equal(fab_test_expect_word(child.sock, "readable"), 0);
    assert_int_equal(settled_references(sock_stats, &watcher), refs);

    /* The flooders go, their references with them; the import succeeds. */
    for (int i = 0; i < FLOODERS; i++)
        close(flooders[i]);
    deadline = now_s() + FAB_TEST_TIMEOUT_MS / 1000.0;
    fab_daemon_stats_t stats = raw_stats(watcher);
    while ((stats.references != 1 || stats.clients != 2) && now_s() < deadline)
        stats = raw_stats(watcher);
    assert_int_equal(stats.references, 1);
    assert_int_equal(stats.clients, 2);
    assert_int_equal(fab_test_send_word(child.sock, "import"), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "FAB_SUCCESS"), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "FAB_SUCCESS"), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "readable"), 0);
    assert_int_equal(fab_test_send_word(child.sock, "done"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    /* It kept its one connection throughout (the library would have
     * reconnected, and hidden it, had the daemon closed it). */
    char hello[64];
    snprintf(hello, sizeof(hello), "client pid %ld uid %lu on node", (long)child.pid, uid);
    assert_int_equal(fab_test_daemon_log_count(daemon, hello), 1);
    close(watcher);
}

static void a_reply_whose_fd_cannot_travel_fails_alone(void **state)
{
    (void)state;
    replies_whose_fds_cannot_travel_fail_alone(0);
}

/* The same with IMPORT_MANY: a batch reply whose fds cannot travel is
 * undone whole (every import in it), and fails alone. */
static void a_batch_reply_whose_fds_cannot_travel_fails_alone(void **state)
{
    (void)state;
    replies_whose_fds_cannot_travel_fail_alone(FAB__IMPORT_MANY_MAX);
}

/* ---- deadlines -------------------------------------------------------------------- */

static void stop_daemon(const fab_test_daemon_t *daemon)
{
    assert_int_equal(kill(daemon->pid, SIGSTOP), 0);
    int status = 0;
    assert_int_equal(waitpid(daemon->pid, &status, WUNTRACED), daemon->pid);
    assert_true(WIFSTOPPED(status));
}

static void client_waits_for_a_stopped_daemon_no_longer_than_its_deadline(void **state)
{
    (void)state;
    /* Under valgrind the daemon needs more than 300 ms for a reply now and
     * then, and the deadline is for a stopped daemon, not a slow one. */
    const char *timeout = under_valgrind() ? "3000" : "300";
    setenv("FABMEM_TIMEOUT_MS", timeout, 1);
    /* A wait gives up no sooner than its timeout (the kernel's timer may end
     * a receive up to a tick early, 10 ms at HZ=100) and not much later. */
    double least = atoi(timeout) / 1000.0 - 0.011;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    fab_client_t *client;
    assert_int_equal(fab_client_connect(NULL, &client), FAB_SUCCESS);
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    fab_region_t *region;
    fab_handle_t handle;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_SUCCESS);
    assert_int_equal(fab_region_export(region, &handle), FAB_SUCCESS);
    char *p;
    assert_int_equal(fab_region_map(region, FAB_ACCESS_READ_WRITE, (void **)&p), FAB_SUCCESS);
    strcpy(p, "held through a stop");

    stop_daemon(daemon);
    double start = now_s();
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(client, &stats), FAB_ERROR_SYSTEM_NOT_READY);
    assert_true(now_s() - start >= least);
    assert_true(now_s() - start < 20);
    assert_int_equal(kill(daemon->pid, SIGCONT), 0);
    /* The connection and its reference survived: the late STATS reply is
     * read and dropped with this call's. */
    assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
    assert_int_equal(stats.clients, 1);
    assert_int_equal(stats.allocations, 1);
    assert_int_equal(stats.references, 1);

    /* An IMPORT that times out: its late reply hands out a reference, which
     * the client gives back with its next call. */
    stop_daemon(daemon);
    fab_region_t *imported = NULL;
    start = now_s();
    assert_int_equal(fab_client_import(client, &handle, 0, &imported), FAB_ERROR_SYSTEM_NOT_READY);
    assert_true(now_s() - start >= least);
    assert_true(now_s() - start < 20);
    assert_null(imported);
    assert_int_equal(kill(daemon->pid, SIGCONT), 0);
    /* The next call reads the late reply and sends its RELEASE (after its
     * own request: the figures of a STATS in its place would still count
     * the reference); the call after that sees it gone. */
    bool live = false;
    assert_int_equal(fab_client_verify(client, &handle, &live), FAB_SUCCESS);
    assert_true(live);
    assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
    assert_int_equal(stats.references, 1);
    assert_int_equal(stats.allocations, 1);
    assert_string_equal(p, "held through a stop");
    /* And the client works as before. */
    assert_int_equal(fab_client_import(client, &handle, 0, &imported), FAB_SUCCESS);
    assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
    assert_int_equal(stats.references, 2);
    assert_int_equal(fab_region_release(imported), FAB_SUCCESS);
    assert_int_equal(fab_region_unmap(region, p), FAB_SUCCESS);
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
    assert_int_equal(stats.references, 0);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
    /* One connection throughout: no reconnection hid a lost one. */
    assert_int_equal(fab_test_daemon_log_count(daemon, "on node"), 1);
}

/* ---- start and options -------------------------------------------------------------- */

/* Run fabmemd (under the tests' launcher, if any) with args after
 * --foreground and --socket DIR/fabmemd.sock; wait for it to exit, at most
 * FAB_TEST_TIMEOUT_MS (then kill it: -1). Its stderr goes to err. Returns
 * its exit status. */
static int run_daemon(const char *dir, const char *const *args, char *err, size_t cap)
{
    const char *exe = getenv("FABMEM_DAEMON");
    assert_non_null(exe);
    char sock[512];
    snprintf(sock, sizeof(sock), "%s/fabmemd.sock", dir);
    const char *argv[64];
    char launcher[1024];
    int k = fab_test_daemon_argv(exe, argv, launcher, sizeof(launcher));
    argv[k++] = "--foreground";
    argv[k++] = "--socket";
    argv[k++] = sock;
    for (int i = 0; args[i] != NULL && k < 63; i++)
        argv[k++] = args[i];
    argv[k] = NULL;
    int pipefd[2];
    assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        dup2(pipefd[1], 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(pipefd[1]);
    /* Its stderr closes when it exits: that is the event to wait for. */
    size_t used = 0;
    double deadline = now_s() + FAB_TEST_TIMEOUT_MS / 1000.0;
    int done = 0;
    while (!done) {
        int left = (int)((deadline - now_s()) * 1000);
        struct pollfd p = {.fd = pipefd[0], .events = POLLIN};
        if (left <= 0 || poll(&p, 1, left) <= 0)
            break;
        char buf[512];
        ssize_t n = read(pipefd[0], buf, sizeof(buf));
        if (n <= 0) {
            done = n == 0;
            if (n < 0 && errno == EINTR)
                continue;
            break;
        }
        size_t take = (size_t)n < cap - 1 - used ? (size_t)n : cap - 1 - used;
        memcpy(err + used, buf, take);
        used += take;
    }
    err[used] = '\0';
    close(pipefd[0]);
    if (!done)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!done)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void key_file_that_is_a_fifo_is_refused_at_start(void **state)
{
    (void)state;
    char *dir = fab_test_tempdir();
    assert_non_null(dir);
    char fifo[512], config[512], text[1200];
    snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
    snprintf(config, sizeof(config), "%s/fabmem.ini", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    snprintf(text, sizeof(text), "[daemon]\nstate_file = %s\n[channel 0]\nuids = %lu\n", fifo,
             (unsigned long)getuid());
    fab_test_write_file(config, text);
    static char err[16384];
    const char *args[] = {"--config", config, "--log", "info", NULL};
    int status = run_daemon(dir, args, err, sizeof(err));
    if (status != 1)
        fail_msg("fabmemd with a FIFO for its state file: status %d (-1: still running after "
                 "%d ms); its stderr:\n%s", status, FAB_TEST_TIMEOUT_MS, err);
    if (strstr(err, fifo) == NULL)
        fail_msg("the log does not name the state file %s:\n%s", fifo, err);
    /* Nothing listens, and the FIFO is left as it was. */
    char sock[512];
    snprintf(sock, sizeof(sock), "%s/fabmemd.sock", dir);
    assert_int_not_equal(access(sock, F_OK), 0);
    struct stat st;
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    fab_test_rmtree(dir);
    free(dir);
}

static void daemon_options_must_be_numbers(void **state)
{
    (void)state;
    static const struct {
        const char *option, *value;
    } bad[] = {
        {"--idle-exit", "abc"}, {"--idle-exit", "-1"}, {"--idle-exit", ""},
        {"--idle-exit", "5s"}, {"--idle-exit", "99999999999999999999"},
        {"--ready-fd", "3x"}, {"--ready-fd", "-3"}, {"--ready-fd", ""},
    };
    char *dir = fab_test_tempdir();
    assert_non_null(dir);
    static char err[16384];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *args[] = {bad[i].option, bad[i].value, NULL};
        int status = run_daemon(dir, args, err, sizeof(err));
        if (status != 2)
            fail_msg("fabmemd %s '%s': status %d, want 2; its stderr:\n%s", bad[i].option,
                     bad[i].value, status, err);
        if (strstr(err, bad[i].option) == NULL)
            fail_msg("fabmemd %s '%s' does not name the option:\n%s", bad[i].option,
                     bad[i].value, err);
    }
    fab_test_rmtree(dir);
    free(dir);
}

static volatile sig_atomic_t ticks;

static void on_tick(int sig)
{
    (void)sig;
    ticks++;
}

/* A signal every 20 ms (an interval timer, as a profiler sets one; with
 * SA_RESTART, which a receive with a timeout ignores) cuts each receive
 * short. A wait for a stopped daemon still ends at its deadline, no sooner
 * than the timeout and at most the 50 ms slack later (with room here for a
 * loaded machine), instead of beginning its timeout again at every signal:
 * the first wait of a call, which reads the clock only once the wait is
 * long or cut short, and a wait that reads a late reply first (a deadline
 * from the start) alike. */
static void signals_do_not_stretch_a_wait_for_a_stopped_daemon(void **state)
{
    (void)state;
    const char *timeout = under_valgrind() ? "3000" : "300";
    setenv("FABMEM_TIMEOUT_MS", timeout, 1);
    double t = atoi(timeout) / 1000.0;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    fab_client_t *client;
    assert_int_equal(fab_client_connect(NULL, &client), FAB_SUCCESS);
    struct sigaction tick = {.sa_handler = on_tick, .sa_flags = SA_RESTART}, old;
    sigemptyset(&tick.sa_mask);
    assert_int_equal(sigaction(SIGALRM, &tick, &old), 0);
    const struct itimerval every = {{0, 20000}, {0, 20000}}, off = {{0, 0}, {0, 0}};

    stop_daemon(daemon);
    fab_daemon_stats_t stats;
    for (int call = 0; call < 2; call++) { /* the second has the first's reply to read */
        ticks = 0;
        double start = now_s();
        assert_int_equal(setitimer(ITIMER_REAL, &every, NULL), 0);
        fab_status_t status = fab_client_stats(client, &stats);
        double took = now_s() - start;
        assert_int_equal(setitimer(ITIMER_REAL, &off, NULL), 0);
        assert_int_equal(status, FAB_ERROR_SYSTEM_NOT_READY);
        assert_true(ticks >= 5);
        assert_true(took >= t - 0.011);
        assert_true(took < t + 1.0);
    }
    assert_int_equal(sigaction(SIGALRM, &old, NULL), 0);
    assert_int_equal(kill(daemon->pid, SIGCONT), 0);
    /* The connection survived: the late replies are read with this call's. */
    assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
    assert_int_equal(stats.clients, 1);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(connections_over_the_uid_limit_are_closed_at_once, fab_test_teardown),
    cmocka_unit_test_teardown(another_uid_is_served_while_one_uid_is_at_its_connection_limit,
                              fab_test_teardown),
    cmocka_unit_test_teardown(allocations_over_the_uid_limit_are_out_of_memory, fab_test_teardown),
    cmocka_unit_test_teardown(bytes_over_the_uid_limit_are_out_of_memory, fab_test_teardown),
    cmocka_unit_test_teardown(stats_show_other_users_only_their_own_figures, fab_test_teardown),
    cmocka_unit_test_teardown(verify_needs_a_channel_shared_with_the_creator, fab_test_teardown),
    cmocka_unit_test_teardown(client_that_never_reads_its_fd_replies_holds_only_a_few_in_flight,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_reply_whose_fd_cannot_travel_fails_alone, fab_test_teardown),
    cmocka_unit_test_teardown(a_batch_reply_whose_fds_cannot_travel_fails_alone,
                              fab_test_teardown),
    cmocka_unit_test_teardown(signals_do_not_stretch_a_wait_for_a_stopped_daemon,
                              fab_test_teardown),
    cmocka_unit_test_teardown(client_waits_for_a_stopped_daemon_no_longer_than_its_deadline,
                              fab_test_teardown),
    cmocka_unit_test_teardown(key_file_that_is_a_fifo_is_refused_at_start, fab_test_teardown),
    cmocka_unit_test_teardown(daemon_options_must_be_numbers, fab_test_teardown),
};

static const fab_test_helper_t helpers[] = {
    {"nobody_allocates", helper_nobody_allocates},
    {"nobody_verifies", helper_nobody_verifies},
    {"nobody_holds", helper_nobody_holds},
};

FAB_TEST_MAIN("fabric", tests, helpers)
