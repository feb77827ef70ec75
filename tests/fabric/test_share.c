/* Real sharing between real processes: the exporter's bytes reach importers
 * and their writes come back; read-only imports fault on write; 64 importers
 * of one allocation; the kill of either side. Each test starts its own
 * fabmemd; helpers are this binary re-run (fab_test_spawn). */
#include "daemon_harness.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fabmem.h"

#define MIB2 (2u * 1024 * 1024)

static fab_client_t *connect_ok(void)
{
    fab_client_t *client = NULL;
    assert_int_equal(fab_client_connect(NULL, &client), FAB_SUCCESS);
    return client;
}

/* helper "importer": receive a handle, import, map, check the pattern,
 * write the reply, say "done". */
static int helper_importer(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    fab_client_t *client;
    if (fab_client_connect(NULL, &client) != FAB_SUCCESS)
        return 10;
    if (fab_test_send_word(sock, "ready") != 0)
        return 11;
    fab_handle_t handle;
    if (fab_test_recv(sock, handle.bytes, sizeof(handle.bytes)) != 0)
        return 12;
    fab_region_t *region;
    if (fab_client_import(client, &handle, 0, &region) != FAB_SUCCESS)
        return 13;
    unsigned char *p;
    if (fab_region_map(region, FAB_ACCESS_READ_WRITE, (void **)&p) != FAB_SUCCESS)
        return 14;
    for (size_t i = 0; i < 4096; i++) {
        if (p[i] != (unsigned char)(i * 7))
            return 15;
    }
    memcpy(p + 8192, "reply from the importer", 24);
    fab_region_unmap(region, p);
    fab_region_release(region);
    fab_client_close(client);
    return fab_test_send_word(sock, "done") == 0 ? 0 : 16;
}

static void share_pattern_between_processes(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    fab_client_t *client = connect_ok();
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    fab_region_t *region;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_SUCCESS);
    assert_int_equal(fab_region_size(region), MIB2);
    unsigned char *p;
    assert_int_equal(fab_region_map(region, FAB_ACCESS_READ_WRITE, (void **)&p), FAB_SUCCESS);
    for (size_t i = 0; i < 4096; i++)
        p[i] = (unsigned char)(i * 7);
    fab_handle_t handle;
    assert_int_equal(fab_region_export(region, &handle), FAB_SUCCESS);
    assert_int_equal(fab_handle_origin(&handle), FAB_HANDLE_ORIGIN_FABRIC);

    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("importer", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send(child.sock, handle.bytes, sizeof(handle.bytes)), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "done"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    assert_string_equal((char *)p + 8192, "reply from the importer");

    assert_int_equal(fab_region_unmap(region, p), FAB_SUCCESS);
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

/* helper "reader": import read-only, refuse a writable map, map for reading,
 * check a byte, then show that a write faults (in a forked child). */
static int helper_reader(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    fab_client_t *client;
    if (fab_client_connect(NULL, &client) != FAB_SUCCESS)
        return 10;
    fab_handle_t handle;
    if (fab_test_send_word(sock, "ready") != 0 ||
        fab_test_recv(sock, handle.bytes, sizeof(handle.bytes)) != 0)
        return 11;
    fab_region_t *region;
    if (fab_client_import(client, &handle, 0, &region) != FAB_SUCCESS)
        return 12;
    if (fab_region_access(region) != FAB_ACCESS_READ_ONLY)
        return 13;
    void *addr;
    if (fab_region_map(region, FAB_ACCESS_READ_WRITE, &addr) != FAB_ERROR_NOT_PERMITTED)
        return 14;
    /* Not even the fd itself can be mapped writable: it was opened read-only. */
    if (mmap(NULL, MIB2, PROT_READ | PROT_WRITE, MAP_SHARED, fab_region_fd(region), 0) != MAP_FAILED)
        return 15;
    volatile unsigned char *p;
    if (fab_region_map(region, FAB_ACCESS_READ_ONLY, (void **)&p) != FAB_SUCCESS)
        return 16;
    if (p[0] != 0xab)
        return 17;
    pid_t pid = fork();
    if (pid == 0) {
        /* Die of the fault itself, not of a sanitizer's report of it. */
        signal(SIGSEGV, SIG_DFL);
        signal(SIGBUS, SIG_DFL);
        p[0] = 1; /* must fault */
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFSIGNALED(status) || (WTERMSIG(status) != SIGSEGV && WTERMSIG(status) != SIGBUS))
        return 18;
    fab_region_unmap(region, (void *)p);
    fab_region_release(region);
    fab_client_close(client);
    return fab_test_send_word(sock, "done") == 0 ? 0 : 19;
}

static void read_only_import_faults_on_write(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    fab_client_t *client = connect_ok();
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    props.peer_access = FAB_ACCESS_READ_ONLY;
    fab_region_t *region;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_SUCCESS);
    unsigned char *p;
    assert_int_equal(fab_region_map(region, FAB_ACCESS_READ_WRITE, (void **)&p), FAB_SUCCESS);
    p[0] = 0xab;
    fab_handle_t handle;
    assert_int_equal(fab_region_export(region, &handle), FAB_SUCCESS);
    assert_int_equal(fab_handle_access(&handle), FAB_ACCESS_READ_ONLY);
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("reader", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send(child.sock, handle.bytes, sizeof(handle.bytes)), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "done"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    assert_int_equal(p[0], 0xab);
    fab_region_unmap(region, p);
    fab_region_release(region);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

/* helper "counter": import, add its index into its own slot, say "done",
 * wait for "bye" (so that all importers hold the memory at once). */
static int helper_counter(int argc, char **argv, int sock)
{
    if (argc < 2)
        return 9;
    int index = atoi(argv[1]);
    fab_client_t *client;
    if (fab_client_connect(NULL, &client) != FAB_SUCCESS)
        return 10;
    fab_handle_t handle;
    if (fab_test_send_word(sock, "ready") != 0 ||
        fab_test_recv(sock, handle.bytes, sizeof(handle.bytes)) != 0)
        return 11;
    fab_region_t *region;
    if (fab_client_import(client, &handle, index % 8, &region) != FAB_SUCCESS)
        return 12;
    unsigned *p;
    if (fab_region_map(region, FAB_ACCESS_READ_WRITE, (void **)&p) != FAB_SUCCESS)
        return 13;
    p[index] = (unsigned)index + 1000;
    if (fab_test_send_word(sock, "done") != 0 || fab_test_expect_word(sock, "bye") != 0)
        return 14;
    fab_region_unmap(region, p);
    fab_region_release(region);
    fab_client_close(client);
    return 0;
}

static void sixty_four_importers_share_one_allocation(void **state)
{
    (void)state;
    enum { N = 64 };
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    fab_client_t *client = connect_ok();
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    fab_region_t *region;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_SUCCESS);
    unsigned *p;
    assert_int_equal(fab_region_map(region, FAB_ACCESS_READ_ONLY, (void **)&p), FAB_SUCCESS);
    fab_handle_t handle;
    assert_int_equal(fab_region_export(region, &handle), FAB_SUCCESS);
    fab_test_child_t children[N];
    for (int i = 0; i < N; i++) {
        char index[16];
        snprintf(index, sizeof(index), "%d", i);
        const char *args[] = {index, NULL};
        assert_int_equal(fab_test_spawn("counter", args, NULL, &children[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        assert_int_equal(fab_test_expect_word(children[i].sock, "ready"), 0);
        assert_int_equal(fab_test_send(children[i].sock, handle.bytes, sizeof(handle.bytes)), 0);
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(fab_test_expect_word(children[i].sock, "done"), 0);
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
    assert_int_equal(stats.allocations, 1);
    assert_int_equal(stats.references, N + 1);
    for (int i = 0; i < N; i++)
        assert_int_equal(p[i], (unsigned)i + 1000);
    for (int i = 0; i < N; i++) {
        assert_int_equal(fab_test_send_word(children[i].sock, "bye"), 0);
        assert_int_equal(fab_test_reap(&children[i]), 0);
    }
    assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
    assert_int_equal(stats.references, 1);
    fab_region_unmap(region, p);
    fab_region_release(region);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

/* helper "exporter": allocate, write, export, send the handle, then wait to
 * be killed. */
static int helper_exporter(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    fab_client_t *client;
    if (fab_client_connect(NULL, &client) != FAB_SUCCESS)
        return 10;
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    fab_region_t *region;
    char *p;
    fab_handle_t handle;
    if (fab_client_allocate(client, &props, &region) != FAB_SUCCESS ||
        fab_region_map(region, FAB_ACCESS_READ_WRITE, (void **)&p) != FAB_SUCCESS ||
        fab_region_export(region, &handle) != FAB_SUCCESS)
        return 11;
    strcpy(p, "written before the kill");
    if (fab_test_send(sock, handle.bytes, sizeof(handle.bytes)) != 0)
        return 12;
    fab_test_expect_word(sock, "never sent");
    return 13;
}

static void exporter_killed_leaves_importers_their_memory(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    fab_client_t *client = connect_ok();
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("exporter", NULL, NULL, &child), 0);
    fab_handle_t handle;
    assert_int_equal(fab_test_recv(child.sock, handle.bytes, sizeof(handle.bytes)), 0);
    fab_region_t *region;
    assert_int_equal(fab_client_import(client, &handle, 0, &region), FAB_SUCCESS);
    char *p;
    assert_int_equal(fab_region_map(region, FAB_ACCESS_READ_WRITE, (void **)&p), FAB_SUCCESS);
    kill(child.pid, SIGKILL);
    assert_int_equal(fab_test_reap(&child), 128 + SIGKILL);
    assert_string_equal(p, "written before the kill");
    strcpy(p, "still writable");
    /* Our import keeps the allocation alive: the handle still imports. */
    fab_region_t *again;
    assert_int_equal(fab_client_import(client, &handle, 1, &again), FAB_SUCCESS);
    char *q;
    assert_int_equal(fab_region_map(again, FAB_ACCESS_READ_ONLY, (void **)&q), FAB_SUCCESS);
    assert_string_equal(q, "still writable");
    fab_region_unmap(again, q);
    fab_region_release(again);
    /* Released while mapped: the mapping lives on, the reference goes at unmap. */
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    assert_string_equal(p, "still writable");
    assert_int_equal(fab_region_unmap(region, p), FAB_SUCCESS);
    /* Now nothing holds it: the handle is stale. */
    assert_int_equal(fab_client_import(client, &handle, 0, &again), FAB_ERROR_INVALID_HANDLE);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

/* helper "holder": import, map, say "mapped", wait to be killed. */
static int helper_holder(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    fab_client_t *client;
    fab_handle_t handle;
    fab_region_t *region;
    void *p;
    if (fab_client_connect(NULL, &client) != FAB_SUCCESS ||
        fab_test_send_word(sock, "ready") != 0 ||
        fab_test_recv(sock, handle.bytes, sizeof(handle.bytes)) != 0 ||
        fab_client_import(client, &handle, 0, &region) != FAB_SUCCESS ||
        fab_region_map(region, FAB_ACCESS_READ_WRITE, &p) != FAB_SUCCESS)
        return 10;
    fab_test_send_word(sock, "mapped");
    fab_test_expect_word(sock, "never sent");
    return 11;
}

static void importer_killed_drops_its_references(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    fab_client_t *client = connect_ok();
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    fab_region_t *region;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_SUCCESS);
    fab_handle_t handle;
    assert_int_equal(fab_region_export(region, &handle), FAB_SUCCESS);
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("holder", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send(child.sock, handle.bytes, sizeof(handle.bytes)), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "mapped"), 0);
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
    assert_int_equal(stats.references, 2);
    assert_int_equal(stats.clients, 2);
    kill(child.pid, SIGKILL);
    assert_int_equal(fab_test_reap(&child), 128 + SIGKILL);
    /* The daemon saw the socket close before it answers our next request?
     * Not necessarily: ask until it has (each ask is a round trip). */
    for (int i = 0; i < 1000 && stats.clients != 1; i++)
        assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
    assert_int_equal(stats.clients, 1);
    assert_int_equal(stats.references, 1);
    fab_region_release(region);
    assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
    assert_int_equal(stats.allocations, 0);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static void release_while_mapped_keeps_memory_until_unmap(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    fab_client_t *client = connect_ok();
    fab_alloc_props_t props = fab_alloc_props_read_write(2, 2 * MIB2);
    fab_region_t *region;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_SUCCESS);
    assert_int_equal(fab_region_device_ordinal(region), 2);
    fab_handle_t handle;
    assert_int_equal(fab_region_export(region, &handle), FAB_SUCCESS);
    char *a, *b;
    assert_int_equal(fab_region_map(region, FAB_ACCESS_READ_WRITE, (void **)&a), FAB_SUCCESS);
    assert_int_equal(fab_region_map(region, FAB_ACCESS_READ_WRITE, (void **)&b), FAB_SUCCESS);
    strcpy(a, "two views");
    assert_string_equal(b, "two views");
    assert_int_equal(fab_client_close(client), FAB_ERROR_ILLEGAL_STATE);
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    assert_int_equal(fab_client_close(client), FAB_ERROR_ILLEGAL_STATE);
    assert_int_equal(fab_region_unmap(region, a), FAB_SUCCESS);
    assert_int_equal(fab_region_unmap(region, (char *)b + 1), FAB_ERROR_INVALID_VALUE);
    bool live = false;
    assert_int_equal(fab_client_verify(client, &handle, &live), FAB_SUCCESS);
    assert_true(live);
    assert_int_equal(fab_region_unmap(region, b), FAB_SUCCESS);
    assert_int_equal(fab_client_verify(client, &handle, &live), FAB_SUCCESS);
    assert_false(live);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

/* Past the two mappings a region keeps in place, the rest are kept apart
 * and every one unmaps, whichever order; the memory goes at the last. */
static void many_mappings_of_one_region_each_unmap(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    fab_client_t *client = connect_ok();
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    fab_region_t *region;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_SUCCESS);
    fab_handle_t handle;
    assert_int_equal(fab_region_export(region, &handle), FAB_SUCCESS);
    enum { VIEWS = 9 };
    char *view[VIEWS];
    for (int i = 0; i < VIEWS; i++) {
        assert_int_equal(fab_region_map(region, FAB_ACCESS_READ_WRITE, (void **)&view[i]),
                         FAB_SUCCESS);
        view[i][i] = (char)('a' + i);
    }
    for (int i = 0; i < VIEWS; i++)
        assert_int_equal(view[0][i], 'a' + i); /* one memory under every view */
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    /* the second, the first, then from the last down */
    assert_int_equal(fab_region_unmap(region, view[1]), FAB_SUCCESS);
    assert_int_equal(fab_region_unmap(region, view[1]), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_region_unmap(region, view[0]), FAB_SUCCESS);
    bool live = false;
    for (int i = VIEWS - 1; i >= 2; i--) {
        assert_int_equal(fab_client_verify(client, &handle, &live), FAB_SUCCESS);
        assert_true(live);
        assert_int_equal(view[i][0], 'a');
        assert_int_equal(fab_region_unmap(region, view[i]), FAB_SUCCESS);
    }
    assert_int_equal(fab_client_verify(client, &handle, &live), FAB_SUCCESS);
    assert_false(live);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static void threads_share_one_client(void **state);

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(share_pattern_between_processes, fab_test_teardown),
    cmocka_unit_test_teardown(read_only_import_faults_on_write, fab_test_teardown),
    cmocka_unit_test_teardown(sixty_four_importers_share_one_allocation, fab_test_teardown),
    cmocka_unit_test_teardown(exporter_killed_leaves_importers_their_memory, fab_test_teardown),
    cmocka_unit_test_teardown(importer_killed_drops_its_references, fab_test_teardown),
    cmocka_unit_test_teardown(release_while_mapped_keeps_memory_until_unmap, fab_test_teardown),
    cmocka_unit_test_teardown(many_mappings_of_one_region_each_unmap, fab_test_teardown),
    cmocka_unit_test_teardown(threads_share_one_client, fab_test_teardown),
};


static void *thread_body(void *arg)
{
    fab_client_t *client = arg;
    for (int i = 0; i < 50; i++) {
        fab_alloc_props_t props = fab_alloc_props_read_write(i % 8, MIB2);
        fab_region_t *region, *imported;
        fab_handle_t handle;
        if (fab_client_allocate(client, &props, &region) != FAB_SUCCESS ||
            fab_region_export(region, &handle) != FAB_SUCCESS ||
            fab_client_import(client, &handle, 0, &imported) != FAB_SUCCESS)
            return (void *)1;
        fab_region_release(imported);
        fab_region_release(region);
    }
    return NULL;
}

static void threads_share_one_client(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    fab_client_t *client = connect_ok();
    pthread_t threads[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, thread_body, client), 0);
    for (int i = 0; i < 4; i++) {
        void *result;
        pthread_join(threads[i], &result);
        assert_null(result);
    }
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(client, &stats), FAB_SUCCESS);
    assert_int_equal(stats.allocations, 0);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static const fab_test_helper_t helpers[] = {
    {"importer", helper_importer}, {"reader", helper_reader},   {"counter", helper_counter},
    {"exporter", helper_exporter}, {"holder", helper_holder},
};

FAB_TEST_MAIN("fabric", tests, helpers)
