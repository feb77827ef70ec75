/* Bad input never crashes, leaks or stalls the daemon: malformed, truncated,
 * oversized, empty and out-of-order messages, stray fds, unknown regions,
 * ADOPT without proof or with other memory, IPC messages with missing,
 * unsealed or stray fds and forged bytes, a
 * client that never reads its replies, and a client that vanishes holding
 * memory. Raw connections speak the wire protocol directly (proto.h). */
#include "daemon_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fabmem.h"
#include "src/common/memfd.h"
#include "src/common/proto.h"

static void raw_send(int sock, const void *buf, size_t len)
{
    assert_int_equal(send(sock, buf, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* The daemon still serves a well-behaved client, and holds no more fds than
 * it did at the start (its closes may lag our round trips by a little). */
static void daemon_is_healthy(const fab_test_daemon_t *daemon, int baseline_fds)
{
    fab_client_t *client;
    assert_int_equal(fab_client_connect(NULL, &client), FAB_SUCCESS);
    fab_daemon_stats_t stats;
    int fds = -1;
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
        fds = fab_test_daemon_fd_count(daemon);
        if (fds == baseline_fds + 1 && stats.clients == 1)
            break;
    }
    assert_int_equal(stats.clients, 1);
    assert_int_equal(stats.allocations, 0);
    assert_int_equal(fds, baseline_fds + 1); /* + this client's socket */
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static fab_test_daemon_t *start(int *baseline)
{
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    *baseline = fab_test_daemon_fd_count(daemon);
    assert_true(*baseline > 0);
    return daemon;
}

static void malformed_message_closes_the_connection(void **state)
{
    (void)state;
    int baseline;
    fab_test_daemon_t *daemon = start(&baseline);
    static const char *const junk[] = {
        "GET / HTTP/1.0\r\n\r\n",          /* not our magic */
        "FBM1\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00", /* HELLO without a body */
        "FBM1\x63\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00", /* unknown type */
    };
    for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
        int sock = fab_test_raw_connect(daemon->socket);
        raw_send(sock, junk[i], i == 0 ? strlen(junk[i]) : 16);
        assert_int_equal(fab_test_raw_reply(sock, NULL, NULL), -1);
        close(sock);
    }
    /* A known type with a nonzero status field, and one with reserved bits. */
    int sock = fab_test_raw_connect(daemon->socket);
    fab_test_raw_say_hello(sock);
    uint8_t buf[FAB__PROTO_MAX];
    fab__request_t stats = {.type = FAB__MSG_STATS, .seq = 2};
    size_t len = fab__request_encode(&stats, buf);
    buf[12] = 1;
    raw_send(sock, buf, len);
    assert_int_equal(fab_test_raw_reply(sock, NULL, NULL), -1);
    close(sock);
    daemon_is_healthy(daemon, baseline);
}

static void truncated_message_closes_the_connection(void **state)
{
    (void)state;
    int baseline;
    fab_test_daemon_t *daemon = start(&baseline);
    fab__request_t request = {.type = FAB__MSG_IMPORT, .seq = 2};
    uint8_t buf[FAB__PROTO_MAX];
    size_t full = fab__request_encode(&request, buf);
    for (size_t cut = 1; cut < full; cut += 7) {
        int sock = fab_test_raw_connect(daemon->socket);
        fab_test_raw_say_hello(sock);
        raw_send(sock, buf, cut);
        assert_int_equal(fab_test_raw_reply(sock, NULL, NULL), -1);
        close(sock);
    }
    /* A name length that promises more than the message holds. */
    int sock = fab_test_raw_connect(daemon->socket);
    fab__request_t hello = {.type = FAB__MSG_HELLO, .seq = 1};
    hello.u.hello.version = FAB__PROTO_VERSION;
    hello.u.hello.name_len = 4;
    memcpy(hello.u.hello.name, "node", 4);
    size_t len = fab__request_encode(&hello, buf);
    raw_send(sock, buf, len - 2);
    assert_int_equal(fab_test_raw_reply(sock, NULL, NULL), -1);
    close(sock);
    daemon_is_healthy(daemon, baseline);
}

static void oversized_or_empty_message_closes_the_connection(void **state)
{
    (void)state;
    int baseline;
    fab_test_daemon_t *daemon = start(&baseline);
    static uint8_t big[64 * 1024];
    fab__request_t stats = {.type = FAB__MSG_STATS, .seq = 2};
    fab__request_encode(&stats, big);
    int sock = fab_test_raw_connect(daemon->socket);
    fab_test_raw_say_hello(sock);
    raw_send(sock, big, sizeof(big));
    assert_int_equal(fab_test_raw_reply(sock, NULL, NULL), -1);
    close(sock);
    sock = fab_test_raw_connect(daemon->socket);
    fab_test_raw_say_hello(sock);
    raw_send(sock, big, FAB__PROTO_MAX + 1);
    assert_int_equal(fab_test_raw_reply(sock, NULL, NULL), -1);
    close(sock);
    sock = fab_test_raw_connect(daemon->socket);
    raw_send(sock, big, 0);
    assert_int_equal(fab_test_raw_reply(sock, NULL, NULL), -1);
    close(sock);
    daemon_is_healthy(daemon, baseline);
}

static void out_of_order_requests_get_an_error_reply(void **state)
{
    (void)state;
    int baseline;
    fab_test_daemon_t *daemon = start(&baseline);
    int sock = fab_test_raw_connect(daemon->socket);
    fab__request_t alloc = {.type = FAB__MSG_ALLOC, .seq = 1};
    alloc.u.alloc.size = 2u << 20;
    alloc.u.alloc.peer_access = FAB_ACCESS_READ_WRITE;
    alloc.u.alloc.handle_type = FAB_HANDLE_TYPE_FABRIC;
    fab_test_raw_send(sock, &alloc, -1);
    assert_int_equal(fab_test_raw_reply(sock, NULL, NULL), FAB_ERROR_ILLEGAL_STATE);
    fab__request_t release = {.type = FAB__MSG_RELEASE, .seq = 2};
    fab_test_raw_send(sock, &release, -1);
    assert_int_equal(fab_test_raw_reply(sock, NULL, NULL), FAB_ERROR_ILLEGAL_STATE);
    fab_test_raw_say_hello(sock);
    fab__request_t hello = {.type = FAB__MSG_HELLO, .seq = 3};
    hello.u.hello.version = FAB__PROTO_VERSION;
    fab_test_raw_send(sock, &hello, -1);
    assert_int_equal(fab_test_raw_reply(sock, NULL, NULL), FAB_ERROR_ILLEGAL_STATE);
    /* Regions that this connection never had. */
    release.u.region.region = 12345;
    fab_test_raw_send(sock, &release, -1);
    assert_int_equal(fab_test_raw_reply(sock, NULL, NULL), FAB_ERROR_INVALID_HANDLE);
    fab__request_t export = {.type = FAB__MSG_EXPORT, .seq = 4};
    fab_test_raw_send(sock, &export, -1);
    assert_int_equal(fab_test_raw_reply(sock, NULL, NULL), FAB_ERROR_INVALID_HANDLE);
    /* The connection still works. */
    int fd = -1;
    fab_test_raw_send(sock, &alloc, -1);
    assert_int_equal(fab_test_raw_reply(sock, NULL, &fd), FAB_SUCCESS);
    assert_true(fd >= 0);
    close(fd);
    close(sock); /* vanishes holding the allocation: the daemon frees it */
    fab__request_t bad_version = hello;
    sock = fab_test_raw_connect(daemon->socket);
    bad_version.u.hello.version = 99;
    fab_test_raw_send(sock, &bad_version, -1);
    assert_int_equal(fab_test_raw_reply(sock, NULL, NULL), FAB_ERROR_NOT_SUPPORTED);
    close(sock);
    daemon_is_healthy(daemon, baseline);
}

static void stray_fds_are_closed_with_the_connection(void **state)
{
    (void)state;
    int baseline;
    fab_test_daemon_t *daemon = start(&baseline);
    int sock = fab_test_raw_connect(daemon->socket);
    fab_test_raw_say_hello(sock);
    /* A valid request with an fd: an error reply, then the connection goes. */
    uint8_t buf[FAB__PROTO_MAX];
    fab__request_t stats = {.type = FAB__MSG_STATS, .seq = 2};
    size_t len = fab__request_encode(&stats, buf);
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    assert_int_equal(fab__proto_send(sock, buf, len, devnull), 0);
    assert_int_equal(fab_test_raw_reply(sock, NULL, NULL), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_test_raw_reply(sock, NULL, NULL), -1);
    close(sock);
    /* Many fds at once, more than the daemon has room for. */
    sock = fab_test_raw_connect(daemon->socket);
    int fds[32];
    for (int i = 0; i < 32; i++)
        fds[i] = devnull;
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(fds))];
    } control;
    memset(&control, 0, sizeof(control));
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = sizeof(control.buf)};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(fds));
    memcpy(CMSG_DATA(c), fds, sizeof(fds));
    assert_int_equal(sendmsg(sock, &msg, MSG_NOSIGNAL), (ssize_t)len);
    assert_int_equal(fab_test_raw_reply(sock, NULL, NULL), -1);
    close(sock);
    close(devnull);
    daemon_is_healthy(daemon, baseline);
}

static void client_that_never_reads_stalls_only_itself(void **state)
{
    (void)state;
    int baseline;
    fab_test_daemon_t *daemon = start(&baseline);
    int stuck = fab_test_raw_connect(daemon->socket);
    fab_test_raw_say_hello(stuck);
    /* Requests until our socket buffer is full: the daemon's replies pile up
     * unread on its side first. */
    int flags = fcntl(stuck, F_GETFL);
    fcntl(stuck, F_SETFL, flags | O_NONBLOCK);
    uint8_t buf[FAB__PROTO_MAX];
    fab__request_t stats = {.type = FAB__MSG_STATS, .seq = 2};
    size_t len = fab__request_encode(&stats, buf);
    int sent = 0;
    while (sent < 100000 && send(stuck, buf, len, MSG_NOSIGNAL) == (ssize_t)len)
        sent++;
    assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
    assert_true(sent > 10);
    /* Others are served meanwhile. */
    fab_client_t *client;
    assert_int_equal(fab_client_connect(NULL, &client), FAB_SUCCESS);
    fab_alloc_props_t props = fab_alloc_props_read_write(0, 2u << 20);
    fab_region_t *region;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_SUCCESS);
    fab_region_release(region);
    fab_client_close(client);
    close(stuck);
    daemon_is_healthy(daemon, baseline);
}

static void garbage_from_many_connections_leaves_no_trace(void **state)
{
    (void)state;
    int baseline;
    fab_test_daemon_t *daemon = start(&baseline);
    unsigned seed = 12345;
    for (int round = 0; round < 200; round++) {
        int sock = fab_test_raw_connect(daemon->socket);
        if (round % 2)
            fab_test_raw_say_hello(sock);
        uint8_t buf[600];
        size_t len = 1 + (size_t)(rand_r(&seed) % (int)sizeof(buf));
        for (size_t i = 0; i < len; i++)
            buf[i] = (uint8_t)rand_r(&seed);
        if (round % 3 == 0 && len >= 16)
            memcpy(buf, "FBM1", 4); /* get past the magic now and then */
        send(sock, buf, len, MSG_NOSIGNAL);
        close(sock);
    }
    daemon_is_healthy(daemon, baseline);
}

/* ADOPT adds a reference only with an authentic handle and the very memory
 * it names; a creator's claim needs its token (tests/fabric/test_trust.c
 * tries the token, the seals and the tombstones in depth). */
static void adopt_needs_proof_and_the_same_memory(void **state)
{
    (void)state;
    int baseline;
    fab_test_daemon_t *daemon = start(&baseline);
    fab_client_t *client;
    assert_int_equal(fab_client_connect(NULL, &client), FAB_SUCCESS);
    fab_alloc_props_t props = fab_alloc_props_read_write(0, 2u << 20);
    fab_region_t *region;
    fab_handle_t handle;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_SUCCESS);
    assert_int_equal(fab_region_export(region, &handle), FAB_SUCCESS);
    int other;
    assert_int_equal(fab__memfd_create("other", 2u << 20, &other), FAB_SUCCESS);

    int sock = fab_test_raw_connect(daemon->socket);
    fab_test_raw_say_hello(sock);
    assert_int_equal(fab_test_raw_adopt(sock, &handle, 1, NULL, -1), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_test_raw_adopt(sock, &handle, 0, NULL, other), FAB_ERROR_INVALID_HANDLE);
    assert_int_equal(fab_test_raw_adopt(sock, &handle, 1, NULL, fab_region_fd(region)), FAB_ERROR_NOT_PERMITTED);
    fab_handle_t forged;
    uint8_t tag[FAB_HANDLE_TAG_BYTES] = {7};
    assert_int_equal(fab_handle_encode(fab_handle_uuid(&handle), fab_handle_size(&handle),
                                       fab_handle_access(&handle), FAB_HANDLE_ORIGIN_FABRIC,
                                       fab_handle_domain(&handle), tag, &forged), FAB_SUCCESS);
    assert_int_equal(fab_test_raw_adopt(sock, &forged, 0, NULL, fab_region_fd(region)), FAB_ERROR_INVALID_HANDLE);
    assert_int_equal(fab_test_raw_adopt(sock, &handle, 0, NULL, fab_region_fd(region)), FAB_SUCCESS);
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
    assert_int_equal(stats.references, 2);
    close(sock); /* drops the adopted reference */
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    /* Nobody holds it now, and within this daemon's life it stays gone. */
    sock = fab_test_raw_connect(daemon->socket);
    fab_test_raw_say_hello(sock);
    assert_int_equal(fab_test_raw_adopt(sock, &handle, 0, NULL, other), FAB_ERROR_INVALID_HANDLE);
    assert_int_equal(fab_test_raw_adopt(sock, &handle, 1, NULL, other), FAB_ERROR_INVALID_HANDLE);
    close(sock);
    close(other);
    fab_client_close(client);
    daemon_is_healthy(daemon, baseline);
}

static void daemon_out_of_fds_refuses_and_recovers(void **state)
{
    (void)state;
    enum { LIMIT = 24, EXTRA = 40 };
    if (getenv("FABTEST_DAEMON_LAUNCHER") != NULL && *getenv("FABTEST_DAEMON_LAUNCHER") != '\0')
        fab_test_skip("valgrind needs fds of its own under the same limit");
    fab_test_daemon_nofile = LIMIT;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    fab_test_daemon_nofile = 0;
    assert_non_null(daemon);
    fab_client_t *client;
    assert_int_equal(fab_client_connect(NULL, &client), FAB_SUCCESS);
    /* Allocations until the daemon has no fd left for a memfd. */
    fab_region_t *regions[LIMIT];
    int made = 0;
    fab_alloc_props_t props = fab_alloc_props_read_write(0, 2u << 20);
    fab_status_t status = FAB_SUCCESS;
    while (made < LIMIT && (status = fab_client_allocate(client, &props, &regions[made])) == FAB_SUCCESS)
        made++;
    assert_int_equal(status, FAB_ERROR_OUT_OF_MEMORY);
    /* Connections it cannot accept wait in the backlog, and do not make it
     * spin or fail; our own connection keeps working. */
    int socks[EXTRA];
    for (int i = 0; i < EXTRA; i++)
        socks[i] = fab_test_raw_connect(daemon->socket);
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
    assert_int_equal(stats.allocations, (uint64_t)made);
    for (int i = 0; i < made; i++)
        fab_region_release(regions[i]);
    /* With fds free again, the waiting connections are accepted and served. */
    fab_test_raw_say_hello(socks[0]);
    for (int i = 0; i < EXTRA; i++)
        close(socks[i]);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
    assert_true(fab_test_daemon_log_contains(daemon, "pausing new connections"));
}

/* A TOPOLOGY reply round-trips every node field, and a node record whose
 * chassis serial is longer than NVML's 16 bytes does not decode. */
static void topology_record_round_trips_and_refuses_a_long_serial(void **state)
{
    (void)state;
    fab_topology_t *t = NULL;
    unsetenv("FABMEM_CONFIG");
    assert_int_equal(fab_topology_load(NULL, &t), FAB_SUCCESS);
    fab__reply_t reply;
    memset(&reply, 0, sizeof(reply));
    reply.type = FAB__MSG_TOPOLOGY;
    reply.u.topology.node_count = 1;
    reply.u.topology.driver_version = 13000;
    reply.u.topology.node = t->nodes[0];
    snprintf(reply.u.topology.node.info.chassis_serial, FAB_CHASSIS_SERIAL_MAX + 1,
             "0123456789ABCDEF");
    reply.u.topology.node.info.fabric_health = 0x61;
    reply.u.topology.node.info.tray_index = 200;
    reply.u.topology.node.device.pci_domain = 0x1234;
    reply.u.topology.node.info.host_numa_nodes = 2;
    reply.u.topology.node.info.host_memory = 480ull << 30;
    reply.u.topology.node.nattributes = 2;
    reply.u.topology.node.attributes[0] = (fab__attribute_t){128, 1};
    reply.u.topology.node.attributes[1] = (fab__attribute_t){134, -1};
    uint8_t buf[FAB__PROTO_MAX + 1];
    size_t n = fab__reply_encode(&reply, buf);
    fab__reply_t back;
    assert_int_equal(fab__reply_decode(buf, n, &back), FAB_SUCCESS);
    assert_string_equal(back.u.topology.node.info.chassis_serial, "0123456789ABCDEF");
    assert_int_equal(back.u.topology.node.info.fabric_health, 0x61);
    assert_int_equal(back.u.topology.node.info.tray_index, 200);
    assert_int_equal(back.u.topology.node.device.pci_domain, 0x1234);
    assert_int_equal(back.u.topology.node.info.host_numa_nodes, 2);
    assert_int_equal(back.u.topology.node.info.host_memory, 480ull << 30);
    assert_int_equal(back.u.topology.node.nattributes, 2);
    assert_int_equal(back.u.topology.node.attributes[0].id, 128);
    assert_int_equal(back.u.topology.node.attributes[0].value, 1);
    assert_int_equal(back.u.topology.node.attributes[1].id, 134);
    assert_int_equal(back.u.topology.node.attributes[1].value, -1);
    /* The attribute count must match the bytes that follow it. */
    size_t count_at = n - 2 * 8 - 1;
    assert_int_equal(buf[count_at], 2);
    buf[count_at] = 3;
    assert_int_equal(fab__reply_decode(buf, n, &back), FAB_ERROR_INVALID_VALUE);
    buf[count_at] = 1;
    assert_int_equal(fab__reply_decode(buf, n, &back), FAB_ERROR_INVALID_VALUE);
    buf[count_at] = 2;
    /* Before the count: u32 host NUMA nodes and u64 host memory. A node
     * has at least one NUMA node. */
    size_t numa_at = count_at - 12;
    assert_int_equal(buf[numa_at], 2);
    buf[numa_at] = 0;
    assert_int_equal(fab__reply_decode(buf, n, &back), FAB_ERROR_INVALID_VALUE);
    buf[numa_at] = 2;
    /* The serial's length byte sits before its 16 bytes, then the 11 fixed
     * bytes, the 12 of host memory and the attributes; make it 17 and add a
     * byte. */
    size_t at = count_at - 12 - 11 - 16 - 1;
    assert_int_equal(buf[at], 16);
    memmove(buf + at + 2, buf + at + 1, n - at - 1);
    buf[at] = 17;
    buf[at + 1] = 'X';
    assert_int_equal(fab__reply_decode(buf, n + 1, &back), FAB_ERROR_INVALID_VALUE);
    fab_topology_destroy(t);
}

/* An IPC_PUBLISH of kind with fd (-1: none) on sock: its status; the handle
 * bytes to out (may be NULL) on success. */
static int ipc_publish(int sock, uint8_t kind, int device, uint64_t size, int fd, uint8_t *out)
{
    fab__request_t request = {.type = FAB__MSG_IPC_PUBLISH, .seq = 7};
    request.u.ipc_publish.kind = kind;
    request.u.ipc_publish.device = device;
    request.u.ipc_publish.size = size;
    fab__reply_t reply;
    int status = fab_test_raw_call(sock, &request, fd, &reply, NULL);
    if (status == FAB_SUCCESS && out != NULL)
        memcpy(out, reply.u.ipc_publish.bytes, FAB__IPC_HANDLE_BYTES);
    return status;
}

static int ipc_request(int sock, uint16_t type, const uint8_t *bytes, int fd_in, int *fd_out)
{
    fab__request_t request = {.type = type, .seq = 8};
    memcpy(request.u.ipc.bytes, bytes, FAB__IPC_HANDLE_BYTES);
    return fab_test_raw_call(sock, &request, fd_in, NULL, fd_out);
}

static void ipc_messages_refuse_bad_input(void **state)
{
    (void)state;
    int baseline;
    fab_test_daemon_t *daemon = start(&baseline);
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    int sock = fab_test_raw_hello(daemon->socket);
    /* The fd: missing, not sealed, of another size, read-only. */
    assert_int_equal(ipc_publish(sock, 1, 0, page, -1, NULL), FAB_ERROR_INVALID_VALUE);
    int unsealed = memfd_create("unsealed", MFD_CLOEXEC);
    assert_int_equal(ftruncate(unsealed, (off_t)page), 0);
    assert_int_equal(ipc_publish(sock, 1, 0, page, unsealed, NULL), FAB_ERROR_INVALID_VALUE);
    close(unsealed);
    int fd;
    assert_int_equal(fab__memfd_create("ipc", page, &fd), FAB_SUCCESS);
    assert_int_equal(ipc_publish(sock, 1, 0, 2 * page, fd, NULL), FAB_ERROR_INVALID_VALUE);
    int ro = fab__memfd_reopen_read_only(fd);
    assert_true(ro >= 0);
    assert_int_equal(ipc_publish(sock, 1, 0, page, ro, NULL), FAB_ERROR_INVALID_VALUE);
    close(ro);
    assert_int_equal(ipc_publish(sock, 1, 99, page, fd, NULL), FAB_ERROR_INVALID_DEVICE);
    uint8_t h[FAB__IPC_HANDLE_BYTES];
    assert_int_equal(ipc_publish(sock, 1, 0, page, fd, h), FAB_SUCCESS);
    /* Opening one's own handle; altered bytes; a withdraw by another. */
    assert_int_equal(ipc_request(sock, FAB__MSG_IPC_OPEN, h, -1, NULL), FAB_ERROR_INVALID_CONTEXT);
    uint8_t bad[FAB__IPC_HANDLE_BYTES];
    for (size_t i = 0; i < sizeof(bad); i += 9) {
        memcpy(bad, h, sizeof(bad));
        bad[i] ^= 0x40;
        assert_int_equal(ipc_request(sock, FAB__MSG_IPC_OPEN, bad, -1, NULL),
                         FAB_ERROR_INVALID_VALUE);
    }
    int other = fab_test_raw_hello(daemon->socket);
    assert_int_equal(ipc_request(other, FAB__MSG_IPC_WITHDRAW, h, -1, NULL),
                     FAB_ERROR_NOT_PERMITTED);
    /* An fd with an open closes the connection, after an error reply. */
    assert_int_equal(ipc_request(other, FAB__MSG_IPC_OPEN, h, fd, NULL), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_test_raw_reply(other, NULL, NULL), -1);
    close(other);
    /* So does an IPC message of the wrong length, or of an unknown kind. */
    other = fab_test_raw_hello(daemon->socket);
    fab__request_t open_req = {.type = FAB__MSG_IPC_OPEN, .seq = 3};
    uint8_t buf[FAB__PROTO_MAX];
    size_t len = fab__request_encode(&open_req, buf);
    raw_send(other, buf, len - 1);
    assert_int_equal(fab_test_raw_reply(other, NULL, NULL), -1);
    close(other);
    other = fab_test_raw_hello(daemon->socket);
    assert_int_equal(ipc_publish(other, 3, 0, page, -1, NULL), -1);
    close(other);
    /* The publisher withdraws; a second withdraw finds nothing. */
    assert_int_equal(ipc_request(sock, FAB__MSG_IPC_WITHDRAW, h, -1, NULL), FAB_SUCCESS);
    assert_int_equal(ipc_request(sock, FAB__MSG_IPC_WITHDRAW, h, -1, NULL),
                     FAB_ERROR_INVALID_VALUE);
    /* What a connection published goes with it: no fd stays behind. */
    assert_int_equal(ipc_publish(sock, 2, 0, page, fd, NULL), FAB_SUCCESS);
    close(fd);
    close(sock);
    daemon_is_healthy(daemon, baseline);
    assert_true(fab_test_daemon_log_contains(daemon, "left with 1 IPC handles: withdrawn"));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(ipc_messages_refuse_bad_input, fab_test_teardown),
    cmocka_unit_test_teardown(daemon_out_of_fds_refuses_and_recovers, fab_test_teardown),
    cmocka_unit_test_teardown(adopt_needs_proof_and_the_same_memory, fab_test_teardown),
    cmocka_unit_test_teardown(malformed_message_closes_the_connection, fab_test_teardown),
    cmocka_unit_test(topology_record_round_trips_and_refuses_a_long_serial),
    cmocka_unit_test_teardown(truncated_message_closes_the_connection, fab_test_teardown),
    cmocka_unit_test_teardown(oversized_or_empty_message_closes_the_connection, fab_test_teardown),
    cmocka_unit_test_teardown(out_of_order_requests_get_an_error_reply, fab_test_teardown),
    cmocka_unit_test_teardown(stray_fds_are_closed_with_the_connection, fab_test_teardown),
    cmocka_unit_test_teardown(client_that_never_reads_stalls_only_itself, fab_test_teardown),
    cmocka_unit_test_teardown(garbage_from_many_connections_leaves_no_trace, fab_test_teardown),
};

static const fab_test_helper_t helpers[] = {{"none", NULL}};

FAB_TEST_MAIN("fabric", tests, helpers)
