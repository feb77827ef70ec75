/* The daemon's registry in-process (src/daemon/registry.h), for what a
 * socket cannot show: how much it keeps of allocations that are gone. An
 * allocate/release loop of another uid must leave nothing behind (the
 * tombstone set grew about 400 MB an hour under one), while every freed
 * handle stays stale for IMPORT and for ADOPT, even with the creator's
 * token and memory; an allocation adopted from an earlier daemon (a
 * restart: the same key) leaves one tombstone when freed, and only it. */
#include "fabtest.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fabmem.h"
#include "src/common/memfd.h"
#include "src/common/topology_impl.h"
#include "src/daemon/registry.h"

#define MIB2 (2u << 20)
#define NOBODY 65534

typedef struct {
    fab_topology_t *topology;
    fab__registry_t *daemon;
    fab__conn_t *conn;
} world_t;

static const uint8_t key[FAB__KEY_BYTES] = {1, 2, 3, 4, 5, 6, 7, 8};

static int ask(world_t *w, fab__request_t *request, int fd_in, fab__reply_t *reply, int *fd_out)
{
    fab__reply_fds_t fds;
    fab__registry_answer(w->daemon, w->conn, request, fd_in, reply, &fds);
    if (fd_out != NULL)
        *fd_out = fds.count > 0 ? fcntl(fds.fd[0], F_DUPFD_CLOEXEC, 0) : -1;
    fab__reply_fds_release(&fds);
    return (int)reply->status;
}

/* A registry with uid 65534 connected, holding channel 0. */
static void world_open(world_t *w)
{
    char *dir = NULL;
    char *path = fab_test_config_file("[channel 0]\nuids = 65534\n", &dir);
    assert_int_equal(fab_topology_load(path, &w->topology), FAB_SUCCESS);
    fab_test_rmtree(dir);
    free(dir);
    free(path);
    w->daemon = fab__registry_create(w->topology, key);
    assert_non_null(w->daemon);
    w->conn = fab__registry_conn_open(w->daemon, NOBODY, NOBODY, getpid());
    assert_non_null(w->conn);
    fab__request_t hello = {.type = FAB__MSG_HELLO, .seq = 1};
    hello.u.hello.version = FAB__PROTO_VERSION;
    fab__reply_t reply;
    assert_int_equal(ask(w, &hello, -1, &reply, NULL), FAB_SUCCESS);
}

static void world_close(world_t *w)
{
    fab__registry_conn_close(w->daemon, w->conn);
    fab__registry_destroy(w->daemon);
    fab_topology_destroy(w->topology);
}

/* ALLOC: the reply (handle, token, region) and the memfd. */
static int allocate(world_t *w, fab__reply_t *reply, int *fd_out)
{
    fab__request_t alloc = {.type = FAB__MSG_ALLOC, .seq = 2};
    alloc.u.alloc.size = MIB2;
    alloc.u.alloc.peer_access = FAB_ACCESS_READ_WRITE;
    alloc.u.alloc.handle_type = FAB_HANDLE_TYPE_FABRIC;
    return ask(w, &alloc, -1, reply, fd_out);
}

static int release(world_t *w, uint64_t region)
{
    fab__request_t request = {.type = FAB__MSG_RELEASE, .seq = 3};
    request.u.region.region = region;
    fab__reply_t reply;
    return ask(w, &request, -1, &reply, NULL);
}

static int adopt_creator(world_t *w, const fab_handle_t *handle, const uint8_t *token, int fd)
{
    fab__request_t adopt = {.type = FAB__MSG_ADOPT, .seq = 4};
    adopt.u.import.handle = *handle;
    adopt.u.import.handle_type = FAB_HANDLE_TYPE_FABRIC;
    adopt.u.import.creator = 1;
    memcpy(adopt.u.import.token, token, FAB__TOKEN_BYTES);
    fab__reply_t reply;
    return ask(w, &adopt, fcntl(fd, F_DUPFD_CLOEXEC, 0), &reply, NULL);
}

static void freed_allocations_leave_no_tombstone_and_stay_freed(void **state)
{
    (void)state;
    enum { ROUNDS = 20000 };
    world_t w;
    world_open(&w);
    fab__reply_t first;
    int first_fd = -1;
    for (int i = 0; i < ROUNDS; i++) {
        fab__reply_t reply;
        int fd = -1;
        assert_int_equal(allocate(&w, &reply, i == 0 ? &fd : NULL), FAB_SUCCESS);
        if (i == 0) {
            first = reply;
            first_fd = fd;
        }
        assert_int_equal(release(&w, reply.u.alloc.memory.region), FAB_SUCCESS);
    }
    assert_int_equal(fab__registry_alloc_count(w.daemon), 0);
    assert_int_equal(fab__registry_tombstone_count(w.daemon), 0);
    /* The first one's handle is stale, for an import and for its own
     * creator coming back with the token and the very memory. */
    fab__request_t import = {.type = FAB__MSG_IMPORT, .seq = 5};
    import.u.import.handle = first.u.alloc.handle;
    fab__reply_t reply;
    assert_int_equal(ask(&w, &import, -1, &reply, NULL), FAB_ERROR_INVALID_HANDLE);
    assert_int_equal(adopt_creator(&w, &first.u.alloc.handle, first.u.alloc.token, first_fd),
                     FAB_ERROR_INVALID_HANDLE);
    assert_int_equal(fab__registry_alloc_count(w.daemon), 0);
    close(first_fd);
    world_close(&w);
}

static void an_adopted_allocation_freed_leaves_one_tombstone(void **state)
{
    (void)state;
    world_t before;
    world_open(&before);
    fab__reply_t made;
    int fd = -1;
    assert_int_equal(allocate(&before, &made, &fd), FAB_SUCCESS);
    world_close(&before); /* the daemon goes; the client keeps its memfd */
    world_t after;        /* a new daemon with the same key */
    world_open(&after);
    assert_int_equal(adopt_creator(&after, &made.u.alloc.handle, made.u.alloc.token, fd),
                     FAB_SUCCESS);
    assert_int_equal(fab__registry_alloc_count(after.daemon), 1);
    assert_int_equal(release(&after, 1), FAB_SUCCESS); /* its first region id */
    assert_int_equal(fab__registry_alloc_count(after.daemon), 0);
    assert_int_equal(fab__registry_tombstone_count(after.daemon), 1);
    assert_int_equal(adopt_creator(&after, &made.u.alloc.handle, made.u.alloc.token, fd),
                     FAB_ERROR_INVALID_HANDLE);
    close(fd);
    world_close(&after);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(freed_allocations_leave_no_tombstone_and_stay_freed),
    cmocka_unit_test(an_adopted_allocation_freed_leaves_one_tombstone),
};

FAB_TEST_MAIN_NO_HELPERS("registry", tests)
