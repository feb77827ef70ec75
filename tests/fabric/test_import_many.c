/* IMPORT_MANY (protocol 6): several handles in one request, their fds in one
 * reply. Each import is the single import's (same checks, order and
 * statuses); a batch is malformed when its count or length is; a client that
 * said HELLO 5 is refused it and keeps its connection; a version-6 client
 * falls back to single IMPORTs with a daemon that only speaks 5; a batch that
 * a hung IMEX would hold is held whole; the fd limits of the daemon and of the
 * client fail only the imports that did not fit; a batch reply that comes too
 * late, a client that never reads, and a daemon that is gone leak nothing.
 * Raw connections speak the wire protocol directly (proto.h). */
#include "daemon_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fabmem.h"
#include "src/common/faultwords.h"
#include "src/common/memfd.h"
#include "src/common/proto.h"
#include "src/fabric/client_fault.h"

#define MIB2 (2u * 1024 * 1024)

static int under_valgrind(void)
{
    const char *launcher = getenv("FABTEST_DAEMON_LAUNCHER");
    return launcher != NULL && *launcher != '\0';
}

static fab_region_t *allocate(fab_client_t *client, fab_access_t access, fab_handle_t *handle_out)
{
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    props.peer_access = access;
    fab_region_t *region = NULL;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_SUCCESS);
    assert_int_equal(fab_region_export(region, handle_out), FAB_SUCCESS);
    return region;
}

static uint64_t references(fab_client_t *client)
{
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
    return stats.references;
}

/* The daemon's references, read again until they are want (the daemon drops
 * a closed connection's a little after the close) or FAB_TEST_TIMEOUT_MS has
 * passed; asserted. */
static void references_reach(fab_client_t *client, uint64_t want)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t have = references(client);
    for (long ms = 0; have != want && ms <= FAB_TEST_TIMEOUT_MS;) {
        have = references(client);
        clock_gettime(CLOCK_MONOTONIC, &t);
        ms = (t.tv_sec - t0.tv_sec) * 1000L + (t.tv_nsec - t0.tv_nsec) / 1000000L;
    }
    assert_int_equal(have, want);
}

/* ---- the raw protocol --------------------------------------------------------- */

/* A connection that said HELLO version (as a client of node; NULL: the first). */
static int raw_hello_version(const char *path, uint32_t version, const char *node)
{
    int sock = fab_test_raw_connect(path);
    fab__request_t hello = {.type = FAB__MSG_HELLO, .seq = 1};
    hello.u.hello.version = version;
    if (node != NULL) {
        hello.u.hello.name_len = (uint8_t)strlen(node);
        memcpy(hello.u.hello.name, node, strlen(node));
    }
    assert_int_equal(fab_test_raw_call(sock, &hello, -1, NULL, NULL), FAB_SUCCESS);
    return sock;
}

static void raw_send_many(int sock, uint32_t seq, int device, const fab_handle_t *handles,
                          unsigned n)
{
    fab__request_t request;
    memset(&request, 0, sizeof(request));
    request.type = FAB__MSG_IMPORT_MANY;
    request.seq = seq;
    request.u.import_many.device = device;
    request.u.import_many.count = (uint8_t)n;
    memcpy(request.handles, handles, n * sizeof(handles[0]));
    fab_test_raw_send(sock, &request, -1);
}

/* The next reply with all its fds (fds NULL: closed); its status, or -1 when
 * the daemon closed the connection instead. */
static int raw_reply_many(int sock, fab__reply_t *reply_out, int *fds, unsigned *nfds)
{
    struct pollfd p = {.fd = sock, .events = POLLIN};
    assert_int_equal(poll(&p, 1, FAB_TEST_TIMEOUT_MS), 1);
    uint8_t buf[FAB__PROTO_MAX];
    int got[FAB__PROTO_FDS_MAX];
    unsigned n = 0;
    int lost = 0;
    ssize_t len = fab__proto_recv_fds(sock, buf, got, &n, &lost, 0);
    if (len <= 0)
        return -1;
    assert_false(lost);
    fab__reply_t reply;
    assert_int_equal(fab__reply_decode(buf, (size_t)len, &reply), FAB_SUCCESS);
    if (reply_out != NULL)
        *reply_out = reply;
    for (unsigned i = 0; i < n; i++) {
        if (fds != NULL)
            fds[i] = got[i];
        else
            close(got[i]);
    }
    if (nfds != NULL)
        *nfds = n;
    return (int)reply.status;
}

/* Whether fd is the memory that region holds (the same inode). */
static int same_memory(int fd, const fab_region_t *region)
{
    struct stat a, b;
    assert_int_equal(fstat(fd, &a), 0);
    assert_int_equal(fstat(fab_region_fd(region), &b), 0);
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* ---- one request, one reply --------------------------------------------------- */

static void a_batch_is_answered_in_one_reply_with_one_fd_per_import_in_order(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    fab_client_t *creator = fab_test_connect_node(NULL);
    fab_handle_t handles[4];
    fab_region_t *made[3];
    for (int i = 0; i < 3; i++)
        made[i] = allocate(creator, FAB_ACCESS_READ_WRITE, &handles[i]);
    handles[3] = handles[1];
    handles[1].bytes[FAB_HANDLE_TAG_OFFSET] ^= 1; /* forged */
    int sock = fab_test_raw_hello(daemon->socket);
    raw_send_many(sock, 7, 0, handles, 4);
    fab__reply_t reply;
    int fds[FAB__PROTO_FDS_MAX];
    unsigned nfds = 0;
    assert_int_equal(raw_reply_many(sock, &reply, fds, &nfds), FAB_SUCCESS);
    assert_int_equal(reply.type, FAB__MSG_IMPORT_MANY);
    assert_int_equal(reply.seq, 7);
    assert_int_equal(reply.u.import_many.count, 4);
    assert_int_equal(reply.u.import_many.entries[0].status, FAB_SUCCESS);
    assert_int_equal(reply.u.import_many.entries[1].status, FAB_ERROR_INVALID_HANDLE);
    assert_int_equal(reply.u.import_many.entries[2].status, FAB_SUCCESS);
    assert_int_equal(reply.u.import_many.entries[3].status, FAB_SUCCESS);
    /* The fds of the three imports that were made, in the entries' order. */
    assert_int_equal(nfds, 3);
    assert_true(same_memory(fds[0], made[0]));
    assert_true(same_memory(fds[1], made[2]));
    assert_true(same_memory(fds[2], made[1]));
    uint64_t ids[3] = {reply.u.import_many.entries[0].memory.region,
                       reply.u.import_many.entries[2].memory.region,
                       reply.u.import_many.entries[3].memory.region};
    assert_true(ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2]);
    assert_int_equal(reply.u.import_many.entries[2].memory.size, MIB2);
    for (unsigned i = 0; i < nfds; i++)
        close(fds[i]);
    assert_int_equal(references(creator), 6);
    close(sock);
    for (int i = 0; i < 3; i++)
        fab_region_release(made[i]);
    fab_client_close(creator);
}

static void a_max_size_batch_of_one_handle_repeated_imports_it_each_time(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    fab_client_t *creator = fab_test_connect_node(NULL);
    fab_handle_t handle;
    fab_region_t *region = allocate(creator, FAB_ACCESS_READ_ONLY, &handle);
    fab_handle_t handles[FAB__IMPORT_MANY_MAX];
    for (int i = 0; i < FAB__IMPORT_MANY_MAX; i++)
        handles[i] = handle;
    int sock = fab_test_raw_hello(daemon->socket);
    raw_send_many(sock, 2, 0, handles, FAB__IMPORT_MANY_MAX);
    fab__reply_t reply;
    int fds[FAB__PROTO_FDS_MAX];
    unsigned nfds = 0;
    assert_int_equal(raw_reply_many(sock, &reply, fds, &nfds), FAB_SUCCESS);
    assert_int_equal(nfds, FAB__IMPORT_MANY_MAX);
    for (int i = 0; i < FAB__IMPORT_MANY_MAX; i++) {
        assert_int_equal(reply.u.import_many.entries[i].status, FAB_SUCCESS);
        assert_int_equal(reply.u.import_many.entries[i].memory.access, FAB_ACCESS_READ_ONLY);
        /* Read-only imports: each fd opened read-only, none writable. */
        assert_int_equal(fcntl(fds[i], F_GETFL) & O_ACCMODE, O_RDONLY);
        assert_true(same_memory(fds[i], region));
        close(fds[i]);
    }
    assert_int_equal(references(creator), 1 + FAB__IMPORT_MANY_MAX);
    close(sock); /* every reference goes with the connection */
    references_reach(creator, 1);
    fab_region_release(region);
    fab_client_close(creator);
}

/* A batch past the most, an empty one, and a count that does not match the
 * handle bytes are malformed: the connection is closed, nothing is held. */
static void an_over_max_empty_or_misaligned_batch_is_malformed(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    int baseline = fab_test_daemon_fd_count(daemon);
    fab_client_t *creator = fab_test_connect_node(NULL);
    fab_handle_t handle;
    fab_region_t *region = allocate(creator, FAB_ACCESS_READ_WRITE, &handle);
    fab__request_t request;
    memset(&request, 0, sizeof(request));
    request.type = FAB__MSG_IMPORT_MANY;
    request.seq = 3;
    request.u.import_many.count = 2;
    request.handles[0] = request.handles[1] = handle;
    uint8_t buf[FAB__PROTO_MAX];
    size_t two = fab__request_encode(&request, buf); /* 16 + 5 + 2 x 64 */
    assert_int_equal(two, FAB__PROTO_HEADER + 5 + 2 * FAB_HANDLE_BYTES);
    for (int which = 0; which < 5; which++) {
        int sock = fab_test_raw_hello(daemon->socket);
        size_t len = two;
        fab__request_encode(&request, buf);
        if (which == 0) { /* 17 handles */
            buf[FAB__PROTO_HEADER + 4] = FAB__IMPORT_MANY_MAX + 1;
            for (int i = 2; i <= FAB__IMPORT_MANY_MAX; i++)
                memcpy(buf + len + (size_t)FAB_HANDLE_BYTES * (size_t)(i - 2), handle.bytes,
                       FAB_HANDLE_BYTES);
            len += (size_t)FAB_HANDLE_BYTES * (FAB__IMPORT_MANY_MAX - 1);
            assert_true(len <= FAB__PROTO_MAX);
        } else if (which == 1) { /* none */
            buf[FAB__PROTO_HEADER + 4] = 0;
            len = FAB__PROTO_HEADER + 5;
        } else if (which == 2) { /* says 3, holds 2 */
            buf[FAB__PROTO_HEADER + 4] = 3;
        } else if (which == 3) { /* says 1, holds 2 */
            buf[FAB__PROTO_HEADER + 4] = 1;
        } else { /* a handle cut short */
            len -= 1;
        }
        assert_int_equal(send(sock, buf, len, MSG_NOSIGNAL), (ssize_t)len);
        assert_int_equal(raw_reply_many(sock, NULL, NULL, NULL), -1);
        close(sock);
    }
    assert_int_equal(references(creator), 1);
    fab_region_release(region);
    fab_client_close(creator);
    assert_int_equal(fab_test_daemon_fd_count_settled(daemon, baseline), baseline);
}

/* A version-5 client cannot read the reply: IMPORT_MANY is refused with
 * NOT_SUPPORTED, and its connection goes on. */
static void a_version_5_client_is_refused_import_many_and_keeps_its_connection(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    fab_client_t *creator = fab_test_connect_node(NULL);
    fab_handle_t handle;
    fab_region_t *region = allocate(creator, FAB_ACCESS_READ_WRITE, &handle);
    for (uint32_t version = 4; version <= 5; version++) {
        int sock = raw_hello_version(daemon->socket, version, NULL);
        raw_send_many(sock, 2, 0, &handle, 1);
        unsigned nfds = 99;
        assert_int_equal(raw_reply_many(sock, NULL, NULL, &nfds), FAB_ERROR_NOT_SUPPORTED);
        assert_int_equal(nfds, 0);
        fab__request_t import = {.type = FAB__MSG_IMPORT, .seq = 3};
        import.u.import.handle = handle;
        assert_int_equal(fab_test_raw_call(sock, &import, -1, NULL, NULL), FAB_SUCCESS);
        close(sock);
    }
    fab_region_release(region);
    fab_client_close(creator);
}

/* A HELLO the daemon refused may be said again on the same connection, as
 * a version-6 client does with version 5 after a version-5 daemon refused 6. */
static void a_refused_hello_may_be_said_again_on_the_same_connection(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    int sock = fab_test_raw_connect(daemon->socket);
    fab__request_t hello = {.type = FAB__MSG_HELLO, .seq = 1};
    hello.u.hello.version = FAB__PROTO_VERSION + 1;
    assert_int_equal(fab_test_raw_call(sock, &hello, -1, NULL, NULL), FAB_ERROR_NOT_SUPPORTED);
    hello.u.hello.version = FAB__PROTO_VERSION_IMPORT_MANY - 1;
    assert_int_equal(fab_test_raw_call(sock, &hello, -1, NULL, NULL), FAB_SUCCESS);
    assert_int_equal(fab_test_raw_call(sock, &hello, -1, NULL, NULL), FAB_ERROR_ILLEGAL_STATE);
    close(sock);
}

/* ---- every import is the single import ------------------------------------------ */

/* Node a shares memory with nothing but itself: b is in another clique
 * (NOT_SUPPORTED), c in another IMEX domain (INVALID_HANDLE). */
static const char *three_nodes(void)
{
    static char text[512];
    snprintf(text, sizeof(text),
             "[channel 0]\nuids = %u\n"
             "[node a]\nimex_domain = one\nclique_id = 1\ngpus = 2\n"
             "[node b]\nimex_domain = one\nclique_id = 2\ngpus = 2\n"
             "[node c]\nimex_domain = two\nclique_id = 1\ngpus = 2\n",
             (unsigned)getuid());
    return text;
}

static void each_import_of_a_mixed_batch_gets_the_single_imports_status(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(three_nodes(), NULL));
    fab_client_t *a = fab_test_connect_node("a"), *b = fab_test_connect_node("b"), *c = fab_test_connect_node("c");
    enum { N = 7 };
    fab_handle_t handles[N];
    fab_region_t *made[5];
    made[0] = allocate(a, FAB_ACCESS_READ_WRITE, &handles[0]);
    made[1] = allocate(b, FAB_ACCESS_READ_WRITE, &handles[1]);
    made[2] = allocate(c, FAB_ACCESS_READ_WRITE, &handles[2]);
    made[3] = allocate(a, FAB_ACCESS_READ_ONLY, &handles[3]);
    made[4] = allocate(a, FAB_ACCESS_READ_WRITE, &handles[4]);
    fab_region_release(made[4]); /* stale */
    handles[5] = handles[0];
    handles[5].bytes[3] ^= 0x10; /* altered */
    handles[6] = handles[0];
    fab_client_t *importer = fab_test_connect_node("a");
    for (int device = 0; device <= 2; device++) { /* 2: no such GPU */
        fab_region_t *regions[N];
        fab_status_t statuses[N];
        fab_status_t first = fab_client_import_many(importer, handles, N, device, regions, statuses);
        fab_status_t want_first = FAB_SUCCESS;
        for (int i = 0; i < N; i++) {
            fab_region_t *single = NULL;
            fab_status_t want = fab_client_import(importer, &handles[i], device, &single);
            if (statuses[i] != want)
                fail_msg("device %d handle %d: batch %s, single %s", device, i,
                         fab_status_name(statuses[i]), fab_status_name(want));
            if (want_first == FAB_SUCCESS)
                want_first = want;
            assert_true((regions[i] != NULL) == (want == FAB_SUCCESS));
            if (single != NULL) {
                assert_int_equal(fab_region_access(regions[i]), fab_region_access(single));
                assert_int_equal(fab_region_size(regions[i]), fab_region_size(single));
                fab_region_release(single);
                fab_region_release(regions[i]);
            }
        }
        assert_int_equal(first, want_first);
    }
    /* What the batch met, so that the comparison above covered it. */
    fab_region_t *regions[N];
    fab_status_t statuses[N];
    fab_client_import_many(importer, handles, N, 0, regions, statuses);
    const fab_status_t want[N] = {FAB_SUCCESS, FAB_ERROR_NOT_SUPPORTED, FAB_ERROR_INVALID_HANDLE,
                                  FAB_SUCCESS, FAB_ERROR_INVALID_HANDLE, FAB_ERROR_INVALID_HANDLE,
                                  FAB_SUCCESS};
    assert_int_equal(fab_region_access(regions[3]), FAB_ACCESS_READ_ONLY);
    for (int i = 0; i < N; i++) {
        assert_int_equal(statuses[i], want[i]);
        if (regions[i] != NULL)
            fab_region_release(regions[i]);
    }
    for (int i = 0; i < 4; i++)
        fab_region_release(made[i]);
    fab_client_close(importer);
    fab_client_close(a);
    fab_client_close(b);
    fab_client_close(c);
}

/* helper "exporter" N: allocate N regions, write i + 1 into the first byte of
 * region i, send "ready" and the N handles, and hold them until "done". */
static int helper_exporter(int argc, char **argv, int sock)
{
    if (argc < 2)
        return 10;
    int n = atoi(argv[1]);
    fab_client_t *client;
    if (fab_client_connect(NULL, &client) != FAB_SUCCESS)
        return 11;
    fab_region_t *regions[64];
    fab_handle_t handles[64];
    for (int i = 0; i < n && i < 64; i++) {
        fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
        void *addr;
        if (fab_client_allocate(client, &props, &regions[i]) != FAB_SUCCESS ||
            fab_region_export(regions[i], &handles[i]) != FAB_SUCCESS ||
            fab_region_map(regions[i], FAB_ACCESS_READ_WRITE, &addr) != FAB_SUCCESS)
            return 12;
        *(volatile uint8_t *)addr = (uint8_t)(i + 1);
        fab_region_unmap(regions[i], addr);
    }
    if (fab_test_send_word(sock, "ready") != 0 ||
        fab_test_send(sock, handles, (size_t)n * sizeof(handles[0])) != 0 ||
        fab_test_expect_word(sock, "done") != 0)
        return 13;
    for (int i = 0; i < n; i++)
        fab_region_release(regions[i]);
    return fab_client_close(client) == FAB_SUCCESS ? 0 : 14;
}

static void import_many_maps_the_memory_another_process_exported(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    enum { N = 2 * FAB__IMPORT_MANY_MAX + 3 }; /* three batches */
    const char *args[] = {"35", NULL};
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("exporter", args, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    fab_handle_t handles[N];
    assert_int_equal(fab_test_recv(child.sock, handles, sizeof(handles)), 0);
    fab_client_t *importer = fab_test_connect_node(NULL);
    int fds_before = fab_test_open_fds();
    fab_region_t *regions[N];
    fab_status_t statuses[N];
    assert_int_equal(fab_client_import_many(importer, handles, N, 0, regions, statuses),
                     FAB_SUCCESS);
    assert_int_equal(fab_test_open_fds(), fds_before + N); /* one per region, no more */
    for (int i = 0; i < N; i++) {
        assert_int_equal(statuses[i], FAB_SUCCESS);
        fab_uuid_t want = fab_handle_uuid(&handles[i]), have = fab_region_uuid(regions[i]);
        assert_true(fab_uuid_equal(&want, &have));
        void *addr;
        assert_int_equal(fab_region_map(regions[i], FAB_ACCESS_READ_WRITE, &addr), FAB_SUCCESS);
        assert_int_equal(*(volatile uint8_t *)addr, i + 1);
        fab_region_unmap(regions[i], addr);
    }
    assert_int_equal(references(importer), 2 * N);
    for (int i = 0; i < N; i++)
        assert_int_equal(fab_region_release(regions[i]), FAB_SUCCESS);
    assert_int_equal(references(importer), N);
    assert_int_equal(fab_test_open_fds(), fds_before);
    assert_int_equal(fab_test_send_word(child.sock, "done"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    assert_int_equal(fab_client_close(importer), FAB_SUCCESS);
}

/* ---- a daemon that speaks protocol 5 -------------------------------------------- */

/* helper "v5_daemon" PATH: one connection, answered as a version-5 daemon:
 * HELLO 6 is NOT_SUPPORTED, HELLO 5 is taken, an IMPORT gets a memfd,
 * IMPORT_MANY (a type it does not know) closes the connection. At the end it
 * sends "hello6 H hello5 F imports I many M". */
static int helper_v5_daemon(int argc, char **argv, int sock)
{
    if (argc < 2)
        return 10;
    int listener = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr;
    if (fab__sockaddr_un(argv[1], &addr) != 0)
        return 10;
    if (bind(listener, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(listener, 8) != 0 ||
        fab_test_send_word(sock, "ready") != 0)
        return 11;
    int conn = accept(listener, NULL, NULL);
    int hello6 = 0, hello5 = 0, imports = 0, many = 0;
    uint64_t next_region = 1;
    for (;;) {
        uint8_t buf[FAB__PROTO_MAX];
        ssize_t n = fab__proto_recv(conn, buf, NULL, 0);
        fab__request_t request;
        if (n <= 0 || fab__request_decode(buf, (size_t)n, &request) != FAB_SUCCESS)
            break;
        if (request.type == FAB__MSG_IMPORT_MANY) {
            many++;
            break;
        }
        fab__reply_t reply = {.type = request.type, .seq = request.seq};
        int fd = -1;
        if (request.type == FAB__MSG_HELLO && request.u.hello.version > 5) {
            hello6++;
            reply.status = FAB_ERROR_NOT_SUPPORTED;
        } else if (request.type == FAB__MSG_HELLO) {
            hello5++;
        } else if (request.type == FAB__MSG_IMPORT) {
            imports++;
            if (fab__memfd_create("v5", MIB2, &fd) != FAB_SUCCESS)
                return 12;
            reply.u.import.region = next_region++;
            reply.u.import.uuid = fab_handle_uuid(&request.u.import.handle);
            reply.u.import.size = MIB2;
            reply.u.import.access = FAB_ACCESS_READ_WRITE;
        } else if (request.type == FAB__MSG_RELEASE) {
            reply.status = FAB_SUCCESS;
        } else {
            reply.status = FAB_ERROR_INVALID_VALUE;
        }
        size_t len = fab__reply_encode(&reply, buf);
        int sent = fab__proto_send(conn, buf, len, fd);
        if (fd >= 0)
            close(fd);
        if (sent != 0)
            return 13;
    }
    close(conn);
    char word[128];
    snprintf(word, sizeof(word), "hello6 %d hello5 %d imports %d many %d", hello6, hello5,
             imports, many);
    return fab_test_send_word(sock, word) == 0 ? 0 : 14;
}

static void a_version_6_client_sends_single_imports_to_a_version_5_daemon(void **state)
{
    (void)state;
    char *dir = fab_test_tempdir();
    assert_non_null(dir);
    char path[512];
    snprintf(path, sizeof(path), "%s/v5.sock", dir);
    const char *args[] = {path, NULL};
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("v5_daemon", args, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    fab_client_options_t options = {path, NULL, 0};
    fab_client_t *client = NULL;
    assert_int_equal(fab_client_connect(&options, &client), FAB_SUCCESS);
    enum { N = 20 };
    fab_handle_t handles[N];
    memset(handles, 0, sizeof(handles));
    for (int i = 0; i < N; i++)
        handles[i].bytes[0] = (uint8_t)(i + 1);
    fab_region_t *regions[N];
    fab_status_t statuses[N];
    assert_int_equal(fab_client_import_many(client, handles, N, 0, regions, statuses), FAB_SUCCESS);
    for (int i = 0; i < N; i++) {
        assert_int_equal(statuses[i], FAB_SUCCESS);
        assert_int_equal(fab_region_size(regions[i]), MIB2);
        assert_int_equal(fab_region_release(regions[i]), FAB_SUCCESS);
    }
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
    char want[128];
    /* HELLO 7 and 6 refused (both counted as hello6), then 5 taken. */
    snprintf(want, sizeof(want), "hello6 2 hello5 1 imports %d many 0", N);
    assert_int_equal(fab_test_expect_word(child.sock, want), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    fab_test_rmtree(dir);
    free(dir);
}

/* ---- a hung IMEX ------------------------------------------------------------------ */

/* Nodes a and b share memory; b's IMEX is as given; the daemon's import
 * timeout as given. */
static const char *two_nodes(const char *timeout_ms, const char *b_imex)
{
    static char text[640];
    snprintf(text, sizeof(text),
             "[daemon]\nimex_timeout_ms = %s\n[channel 0]\nuids = %u\n"
             "[node a]\nimex_domain = one\nclique_id = 1\ngpus = 2\n"
             "[node b]\nimex_domain = one\nclique_id = 1\ngpus = 2\nimex = %s\n",
             timeout_ms, (unsigned)getuid(), b_imex);
    return text;
}

static void imex(fab_client_t *client, const char *value)
{
    int key = fab__fault_key_parse("imex");
    int32_t v;
    assert_int_equal(fab__fault_value_parse(key, value, &v), 0);
    assert_int_equal(fab__client_fault(client, FAB__FAULT_OP_SET, (uint8_t)key, 1, v), FAB_SUCCESS);
}

static int reply_waiting(int sock)
{
    struct pollfd p = {.fd = sock, .events = POLLIN};
    return poll(&p, 1, 0) == 1;
}

/* A batch with one import across nodes (held by b's hung IMEX) and one
 * within b (not asked of IMEX) is held whole, holding no reference
 * meanwhile, and answered whole once IMEX is back. */
static void a_batch_with_a_held_import_is_held_whole_until_imex_comes_back(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(two_nodes("3600000", "hung"), NULL);
    assert_non_null(daemon);
    fab_client_t *a = fab_test_connect_node("a"), *b = fab_test_connect_node("b");
    fab_handle_t handles[2];
    fab_region_t *local = allocate(b, FAB_ACCESS_READ_WRITE, &handles[0]);
    fab_region_t *remote = allocate(a, FAB_ACCESS_READ_WRITE, &handles[1]);
    int held = raw_hello_version(daemon->socket, FAB__PROTO_VERSION, "b");
    raw_send_many(held, 5, 0, handles, 2);
    /* Others are served meanwhile, and the local import made before the
     * held one is not kept while the batch waits. */
    assert_int_equal(references(a), 2);
    assert_false(reply_waiting(held));
    imex(a, "up");
    fab__reply_t reply;
    int fds[FAB__PROTO_FDS_MAX];
    unsigned nfds = 0;
    assert_int_equal(raw_reply_many(held, &reply, fds, &nfds), FAB_SUCCESS);
    assert_int_equal(reply.seq, 5);
    assert_int_equal(reply.u.import_many.entries[0].status, FAB_SUCCESS);
    assert_int_equal(reply.u.import_many.entries[1].status, FAB_SUCCESS);
    assert_int_equal(nfds, 2);
    assert_true(same_memory(fds[0], local));
    assert_true(same_memory(fds[1], remote));
    close(fds[0]);
    close(fds[1]);
    assert_int_equal(references(a), 4);
    close(held);
    fab_region_release(local);
    fab_region_release(remote);
    fab_client_close(a);
    fab_client_close(b);
}

/* At its deadline, only the import that IMEX still holds fails, as a held
 * IMPORT does; the other is made. */
static void a_held_batch_at_its_deadline_fails_only_the_held_imports(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(two_nodes("20", "hung"), NULL));
    fab_client_t *a = fab_test_connect_node("a"), *b = fab_test_connect_node("b");
    fab_handle_t handles[3];
    fab_region_t *local = allocate(b, FAB_ACCESS_READ_WRITE, &handles[0]);
    fab_region_t *remote = allocate(a, FAB_ACCESS_READ_WRITE, &handles[1]);
    handles[2] = handles[0];
    fab_region_t *regions[3];
    fab_status_t statuses[3];
    assert_int_equal(fab_client_import_many(b, handles, 3, 0, regions, statuses),
                     FAB_ERROR_INVALID_HANDLE);
    assert_int_equal(statuses[0], FAB_SUCCESS);
    assert_int_equal(statuses[1], FAB_ERROR_INVALID_HANDLE);
    assert_int_equal(statuses[2], FAB_SUCCESS);
    assert_null(regions[1]);
    assert_int_equal(references(a), 4);
    fab_region_release(regions[0]);
    fab_region_release(regions[2]);
    fab_region_release(local);
    fab_region_release(remote);
    fab_client_close(a);
    fab_client_close(b);
}

/* ---- limits and losses -------------------------------------------------------------- */

/* The daemon has fds for a few read-only reopenings only: the imports before
 * the limit are made and stay, the later ones fail OUT_OF_MEMORY, as a
 * single import would; the connection and the daemon go on. */
static void a_daemon_out_of_fds_fails_the_later_imports_of_a_batch(void **state)
{
    (void)state;
    enum { LIMIT = 24 };
    if (under_valgrind())
        fab_test_skip("valgrind needs fds of its own under the same limit");
    fab_test_daemon_nofile = LIMIT;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    fab_test_daemon_nofile = 0;
    assert_non_null(daemon);
    fab_client_t *creator = fab_test_connect_node(NULL), *importer = fab_test_connect_node(NULL);
    fab_handle_t handle;
    fab_region_t *region = allocate(creator, FAB_ACCESS_READ_ONLY, &handle);
    int free_fds = LIMIT - fab_test_daemon_fd_count(daemon);
    assert_true(free_fds > 0 && free_fds < FAB__IMPORT_MANY_MAX);
    fab_handle_t handles[FAB__IMPORT_MANY_MAX];
    for (int i = 0; i < FAB__IMPORT_MANY_MAX; i++)
        handles[i] = handle;
    fab_region_t *regions[FAB__IMPORT_MANY_MAX];
    fab_status_t statuses[FAB__IMPORT_MANY_MAX];
    assert_int_equal(fab_client_import_many(importer, handles, FAB__IMPORT_MANY_MAX, 0, regions,
                                            statuses),
                     FAB_ERROR_OUT_OF_MEMORY);
    int made = 0;
    while (made < FAB__IMPORT_MANY_MAX && statuses[made] == FAB_SUCCESS)
        made++;
    assert_int_equal(made, free_fds);
    for (int i = made; i < FAB__IMPORT_MANY_MAX; i++) {
        assert_int_equal(statuses[i], FAB_ERROR_OUT_OF_MEMORY);
        assert_null(regions[i]);
    }
    assert_int_equal(references(importer), 1 + (uint64_t)made);
    for (int i = 0; i < made; i++)
        assert_int_equal(fab_region_release(regions[i]), FAB_SUCCESS);
    /* With its fds back, the next batch is made whole. */
    assert_int_equal(fab_client_import_many(importer, handles, 2, 0, regions, statuses),
                     FAB_SUCCESS);
    fab_region_release(regions[0]);
    fab_region_release(regions[1]);
    fab_region_release(region);
    fab_client_close(importer);
    fab_client_close(creator);
}

/* This process has room for a few fds only: the imports whose fds came are
 * made, the others are OUT_OF_MEMORY with their references given back; the
 * connection stays. */
static void a_client_out_of_fds_gets_out_of_memory_where_fds_were_lost(void **state)
{
    (void)state;
    enum { ROOM = 3, N = 8 };
    if (under_valgrind())
        fab_test_skip("valgrind keeps fds of its own under the same limit");
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    fab_client_t *creator = fab_test_connect_node(NULL), *importer = fab_test_connect_node(NULL);
    fab_handle_t handle;
    fab_region_t *region = allocate(creator, FAB_ACCESS_READ_WRITE, &handle);
    fab_handle_t handles[N];
    for (int i = 0; i < N; i++)
        handles[i] = handle;
    struct rlimit saved, low;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
    low = saved;
    low.rlim_cur = 64;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    int fill[64], nfill = 0;
    while (nfill < 64 && (fill[nfill] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
        nfill++;
    assert_int_equal(errno, EMFILE);
    for (int i = 0; i < ROOM; i++)
        close(fill[--nfill]);
    fab_region_t *regions[N];
    fab_status_t statuses[N];
    assert_int_equal(fab_client_import_many(importer, handles, N, 0, regions, statuses),
                     FAB_ERROR_OUT_OF_MEMORY);
    while (nfill > 0)
        close(fill[--nfill]);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
    for (int i = 0; i < N; i++) {
        assert_int_equal(statuses[i], i < ROOM ? FAB_SUCCESS : FAB_ERROR_OUT_OF_MEMORY);
        assert_true((regions[i] != NULL) == (i < ROOM));
    }
    /* The creator's, and the ROOM made: the others were given back. */
    assert_int_equal(references(importer), 1 + ROOM);
    for (int i = 0; i < ROOM; i++)
        fab_region_release(regions[i]);
    fab_region_release(region);
    fab_client_close(importer);
    fab_client_close(creator);
}

/* A batch whose reply comes after the client's deadline is SYSTEM_NOT_READY
 * for every import; the late reply is read with the next call and
 * everything it handed out given back, its fds closed. */
static void a_batch_reply_after_the_deadline_is_undone_and_leaks_nothing(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(two_nodes("3600000", "hung"), NULL));
    fab_client_t *a = fab_test_connect_node("a");
    fab_handle_t handles[2];
    fab_region_t *remote = allocate(a, FAB_ACCESS_READ_WRITE, &handles[0]);
    fab_region_t *other = allocate(a, FAB_ACCESS_READ_WRITE, &handles[1]);
    setenv("FABMEM_TIMEOUT_MS", "100", 1);
    fab_client_t *b = fab_test_connect_node("b");
    unsetenv("FABMEM_TIMEOUT_MS");
    int fds_before = fab_test_open_fds();
    fab_region_t *regions[2];
    fab_status_t statuses[2];
    assert_int_equal(fab_client_import_many(b, handles, 2, 0, regions, statuses),
                     FAB_ERROR_SYSTEM_NOT_READY);
    assert_int_equal(statuses[0], FAB_ERROR_SYSTEM_NOT_READY);
    assert_int_equal(statuses[1], FAB_ERROR_SYSTEM_NOT_READY);
    assert_null(regions[0]);
    assert_null(regions[1]);
    imex(a, "up"); /* the held batch is answered now, to nobody waiting */
    /* b's next call reads it and gives both references back: their ids
     * ride on the call after it. */
    (void)references(b);
    assert_int_equal(references(b), 2);
    assert_int_equal(fab_test_open_fds(), fds_before);
    fab_region_release(remote);
    fab_region_release(other);
    assert_int_equal(fab_client_close(b), FAB_SUCCESS);
    fab_client_close(a);
}

/* With the daemon gone (and no other to start), every import of the batch
 * is SYSTEM_NOT_READY, and no region or fd is left behind. */
static void a_batch_with_the_daemon_gone_leaves_nothing_behind(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    fab_client_t *importer = fab_test_connect_node(NULL);
    fab_handle_t handles[3];
    memset(handles, 0, sizeof(handles));
    assert_int_equal(fab_test_daemon_stop(daemon), 0);
    int fds_before = fab_test_open_fds();
    fab_region_t *regions[3] = {(fab_region_t *)1, (fab_region_t *)1, (fab_region_t *)1};
    fab_status_t statuses[3];
    assert_int_equal(fab_client_import_many(importer, handles, 3, 0, regions, statuses),
                     FAB_ERROR_SYSTEM_NOT_READY);
    for (int i = 0; i < 3; i++) {
        assert_null(regions[i]);
        assert_int_equal(statuses[i], FAB_ERROR_SYSTEM_NOT_READY);
    }
    assert_int_equal(fab_test_open_fds(), fds_before - 1); /* the broken connection's socket */
    assert_int_equal(fab_client_close(importer), FAB_SUCCESS);
}

/* A client that sends batches and never reads their replies stalls only
 * itself: others are served, and once it goes the daemon holds no reference
 * and no fd of its. */
static void a_client_that_never_reads_batch_replies_stalls_only_itself(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    int baseline = fab_test_daemon_fd_count(daemon);
    fab_client_t *creator = fab_test_connect_node(NULL);
    fab_handle_t handle;
    fab_region_t *region = allocate(creator, FAB_ACCESS_READ_ONLY, &handle);
    fab_handle_t handles[FAB__IMPORT_MANY_MAX];
    for (int i = 0; i < FAB__IMPORT_MANY_MAX; i++)
        handles[i] = handle;
    fab__request_t request;
    memset(&request, 0, sizeof(request));
    request.type = FAB__MSG_IMPORT_MANY;
    request.u.import_many.count = FAB__IMPORT_MANY_MAX;
    memcpy(request.handles, handles, sizeof(handles));
    uint8_t buf[FAB__PROTO_MAX];
    size_t len = fab__request_encode(&request, buf);
    int stuck = fab_test_raw_hello(daemon->socket);
    fcntl(stuck, F_SETFL, fcntl(stuck, F_GETFL) | O_NONBLOCK);
    int sent = 0;
    while (sent < 100000 && send(stuck, buf, len, MSG_NOSIGNAL) == (ssize_t)len)
        sent++;
    assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
    assert_true(sent > 2);
    /* Others are served meanwhile. */
    fab_client_t *other = fab_test_connect_node(NULL);
    fab_region_t *regions[2];
    assert_int_equal(fab_client_import_many(other, handles, 2, 0, regions, NULL), FAB_SUCCESS);
    fab_region_release(regions[0]);
    fab_region_release(regions[1]);
    assert_int_equal(fab_client_close(other), FAB_SUCCESS);
    close(stuck);
    references_reach(creator, 1);
    fab_region_release(region);
    fab_client_close(creator);
    assert_int_equal(fab_test_daemon_fd_count_settled(daemon, baseline), baseline);
}

/* A batch's fds go out only once the client has read every earlier reply:
 * a second batch sent before the first reply is read is refused
 * (OUT_OF_MEMORY, no fds, its imports undone); sent after, it goes. */
static void a_batch_is_refused_while_earlier_replies_are_unread(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    fab_client_t *creator = fab_test_connect_node(NULL);
    fab_handle_t handle;
    fab_region_t *region = allocate(creator, FAB_ACCESS_READ_WRITE, &handle);
    fab_handle_t handles[4] = {handle, handle, handle, handle};
    int sock = fab_test_raw_hello(daemon->socket);
    raw_send_many(sock, 2, 0, handles, 4);
    raw_send_many(sock, 3, 0, handles, 4);
    /* Nothing is read until the daemon has answered the second. */
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long ms = 0; !fab_test_daemon_log_contains(daemon, "earlier replies are unread") &&
                      ms <= FAB_TEST_TIMEOUT_MS;) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        ms = (t.tv_sec - t0.tv_sec) * 1000L + (t.tv_nsec - t0.tv_nsec) / 1000000L;
    }
    fab__reply_t reply;
    unsigned nfds = 99;
    assert_int_equal(raw_reply_many(sock, &reply, NULL, &nfds), FAB_SUCCESS);
    assert_int_equal(reply.seq, 2);
    assert_int_equal(nfds, 4);
    assert_int_equal(raw_reply_many(sock, &reply, NULL, &nfds), FAB_ERROR_OUT_OF_MEMORY);
    assert_int_equal(reply.seq, 3);
    assert_int_equal(nfds, 0);
    assert_int_equal(references(creator), 1 + 4); /* the refused batch's were undone */
    raw_send_many(sock, 4, 0, handles, 4); /* every reply read: it goes */
    assert_int_equal(raw_reply_many(sock, &reply, NULL, &nfds), FAB_SUCCESS);
    assert_int_equal(nfds, 4);
    assert_int_equal(references(creator), 1 + 8);
    close(sock);
    references_reach(creator, 1);
    fab_region_release(region);
    fab_client_close(creator);
}

/* ---- the codec ------------------------------------------------------------------------ */

/* A reply round-trips; one whose entries and length disagree does not
 * decode. */
static void an_import_many_reply_round_trips_and_refuses_a_bad_length(void **state)
{
    (void)state;
    fab__reply_t reply;
    memset(&reply, 0, sizeof(reply));
    reply.type = FAB__MSG_IMPORT_MANY;
    reply.seq = 9;
    reply.u.import_many.count = 3;
    reply.u.import_many.entries[0].memory.region = 4;
    reply.u.import_many.entries[0].memory.size = MIB2;
    reply.u.import_many.entries[1].status = FAB_ERROR_NOT_PERMITTED;
    reply.u.import_many.entries[2].memory.region = 5;
    reply.u.import_many.entries[2].memory.access = FAB_ACCESS_READ_ONLY;
    uint8_t buf[FAB__PROTO_MAX];
    size_t n = fab__reply_encode(&reply, buf);
    assert_int_equal(n, FAB__PROTO_HEADER + 1 + 3 * 4 + 2 * 37);
    fab__reply_t back;
    assert_int_equal(fab__reply_decode(buf, n, &back), FAB_SUCCESS);
    assert_int_equal(back.u.import_many.count, 3);
    assert_int_equal(back.u.import_many.entries[0].memory.region, 4);
    assert_int_equal(back.u.import_many.entries[0].memory.size, MIB2);
    assert_int_equal(back.u.import_many.entries[1].status, FAB_ERROR_NOT_PERMITTED);
    assert_int_equal(back.u.import_many.entries[2].memory.region, 5);
    assert_int_equal(back.u.import_many.entries[2].memory.access, FAB_ACCESS_READ_ONLY);
    assert_int_equal(fab__reply_decode(buf, n - 1, &back), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab__reply_decode(buf, n + 1, &back), FAB_ERROR_INVALID_VALUE);
    buf[FAB__PROTO_HEADER] = 0;
    assert_int_equal(fab__reply_decode(buf, n, &back), FAB_ERROR_INVALID_VALUE);
    buf[FAB__PROTO_HEADER] = FAB__IMPORT_MANY_MAX + 1;
    assert_int_equal(fab__reply_decode(buf, n, &back), FAB_ERROR_INVALID_VALUE);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(a_batch_is_answered_in_one_reply_with_one_fd_per_import_in_order,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_max_size_batch_of_one_handle_repeated_imports_it_each_time,
                              fab_test_teardown),
    cmocka_unit_test_teardown(an_over_max_empty_or_misaligned_batch_is_malformed, fab_test_teardown),
    cmocka_unit_test_teardown(a_version_5_client_is_refused_import_many_and_keeps_its_connection,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_refused_hello_may_be_said_again_on_the_same_connection,
                              fab_test_teardown),
    cmocka_unit_test_teardown(each_import_of_a_mixed_batch_gets_the_single_imports_status,
                              fab_test_teardown),
    cmocka_unit_test_teardown(import_many_maps_the_memory_another_process_exported,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_version_6_client_sends_single_imports_to_a_version_5_daemon,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_batch_with_a_held_import_is_held_whole_until_imex_comes_back,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_held_batch_at_its_deadline_fails_only_the_held_imports,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_daemon_out_of_fds_fails_the_later_imports_of_a_batch,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_client_out_of_fds_gets_out_of_memory_where_fds_were_lost,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_batch_reply_after_the_deadline_is_undone_and_leaks_nothing,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_batch_with_the_daemon_gone_leaves_nothing_behind,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_client_that_never_reads_batch_replies_stalls_only_itself,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_batch_is_refused_while_earlier_replies_are_unread,
                              fab_test_teardown),
    cmocka_unit_test(an_import_many_reply_round_trips_and_refuses_a_bad_length),
};

static const fab_test_helper_t helpers[] = {
    {"exporter", helper_exporter},
    {"v5_daemon", helper_v5_daemon},
};

FAB_TEST_MAIN("fabric", tests, helpers)
