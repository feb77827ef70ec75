/* The daemon's registry in-process (src/daemon/registry.h), for what a
 * socket cannot show: how much it keeps of allocations that are gone. An
 * allocate/release loop of another uid must leave nothing behind (the
 * tombstone set grew about 400 MB an hour under one), while every freed
 * handle stays stale for IMPORT and for ADOPT, even with the creator's
 * token and memory; an allocation adopted from an earlier daemon (a
 * restart: the same key) leaves one tombstone when freed, and only it.
 * And each kind of log line a peer triggers has its own budget. */
#include "fabtest.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fabmem.h"
#include "src/common/log.h"
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

/* Lines of text in the file at path. */
static int count_lines_with(const char *path, const char *text)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof(line), f) != NULL)
        n += strstr(line, text) != NULL;
    fclose(f);
    return n;
}

/* Ten kinds of line of one uid in one second, each within its budget (an
 * info line's 100, a warning's 5): every line is written. A budget shared
 * between kinds (a hash of their formats into fewer limiters than kinds)
 * would hold some back, and which ones would depend on where the linker
 * put the strings. */
static void each_kind_of_log_line_has_its_own_budget(void **state)
{
    (void)state;
    world_t w;
    world_open(&w);
    char *dir = fab_test_tempdir();
    assert_non_null(dir);
    char path[4096];
    snprintf(path, sizeof(path), "%s/log", dir);
    int log = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(log >= 0);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_int_equal(dup2(log, STDERR_FILENO), STDERR_FILENO);
    fab__log_set_level(FAB__LOG_INFO);
    for (int i = 0; i < 20; i++)
        fab__registry_conn_log(w.conn, FAB__LOG_INFO, "kind info, line %d", i);
#define WARN_KIND(k)                                                                    \
    for (int i = 0; i < 5; i++)                                                         \
        fab__registry_conn_log(w.conn, FAB__LOG_WARN, "kind " #k ", line %d", i)
    WARN_KIND(0);
    WARN_KIND(1);
    WARN_KIND(2);
    WARN_KIND(3);
    WARN_KIND(4);
    WARN_KIND(5);
    WARN_KIND(6);
    WARN_KIND(7);
    WARN_KIND(8);
#undef WARN_KIND
    fab__log_set_level(FAB__LOG_WARN);
    assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
    close(saved);
    close(log);
    assert_int_equal(count_lines_with(path, "kind info,"), 20);
    for (int k = 0; k < 9; k++) {
        char kind[16];
        snprintf(kind, sizeof(kind), "kind %d,", k);
        if (count_lines_with(path, kind) != 5)
            fail_msg("%d lines of \"%s\" written of 5", count_lines_with(path, kind), kind);
    }
    assert_int_equal(count_lines_with(path, "more like it"), 0);
    fab_test_rmtree(dir);
    free(dir);
    world_close(&w);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(freed_allocations_leave_no_tombstone_and_stay_freed),
    cmocka_unit_test(an_adopted_allocation_freed_leaves_one_tombstone),
    cmocka_unit_test(each_kind_of_log_line_has_its_own_budget),
};

FAB_TEST_MAIN_NO_HELPERS("registry", tests)
