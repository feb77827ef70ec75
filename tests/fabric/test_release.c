/* Released region ids that ride on the next request (protocol 5): dropped
 * before the request is answered and never answered themselves; an id the
 * connection does not hold changes nothing but the log; a request that
 * claims more ids than allowed, or unknown flags, is malformed. Raw
 * connections speak the wire protocol directly (proto.h). */
#include "daemon_harness.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fabmem.h"
#include "src/common/proto.h"
#include "src/fabric/client_impl.h"

/* HELLO, then ALLOC (region 1) and an IMPORT of its handle (region 2). */
static int raw_alloc_and_import(const fab_test_daemon_t *daemon)
{
    int sock = fab_test_raw_hello(daemon->socket);
    fab__request_t alloc = {.type = FAB__MSG_ALLOC, .seq = 2};
    alloc.u.alloc.size = 2u << 20;
    alloc.u.alloc.peer_access = FAB_ACCESS_READ_WRITE;
    alloc.u.alloc.handle_type = FAB_HANDLE_TYPE_FABRIC;
    fab__reply_t reply;
    int fd = -1;
    assert_int_equal(fab_test_raw_call(sock, &alloc, -1, &reply, &fd), FAB_SUCCESS);
    close(fd);
    assert_int_equal(reply.u.alloc.memory.region, 1);
    fab__request_t import = {.type = FAB__MSG_IMPORT, .seq = 3};
    import.u.import.handle = reply.u.alloc.handle;
    assert_int_equal(fab_test_raw_call(sock, &import, -1, &reply, &fd), FAB_SUCCESS);
    close(fd);
    assert_int_equal(reply.u.import.region, 2);
    return sock;
}

static uint64_t raw_references(int sock, uint32_t seq, const uint64_t *releases, int n)
{
    fab__request_t stats = {.type = FAB__MSG_STATS, .seq = seq};
    stats.nreleases = (uint8_t)n;
    for (int i = 0; i < n; i++)
        stats.releases[i] = releases[i];
    fab__reply_t reply;
    assert_int_equal(fab_test_raw_call(sock, &stats, -1, &reply, NULL), FAB_SUCCESS);
    assert_int_equal(reply.seq, seq); /* the STATS reply, not one for the release */
    return reply.u.stats.references;
}

static void carried_releases_are_dropped_before_the_answer_without_a_reply(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    int sock = raw_alloc_and_import(daemon);
    const uint64_t imported = 2;
    assert_int_equal(raw_references(sock, 4, NULL, 0), 2);
    assert_int_equal(raw_references(sock, 5, &imported, 1), 1);
    /* It is gone: a RELEASE of it now is refused. */
    fab__request_t release = {.type = FAB__MSG_RELEASE, .seq = 6};
    release.u.region.region = imported;
    assert_int_equal(fab_test_raw_call(sock, &release, -1, NULL, NULL), FAB_ERROR_INVALID_HANDLE);
    close(sock);
}

static void a_carried_release_of_an_unknown_id_is_logged_and_the_request_answered(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    int sock = raw_alloc_and_import(daemon);
    const uint64_t ids[2] = {999, 2};
    assert_int_equal(raw_references(sock, 4, ids, 2), 1); /* 999 changed nothing */
    char text[128];
    snprintf(text, sizeof(text), "pid %ld released region 999, which it does not hold",
             (long)getpid());
    assert_true(fab_test_daemon_log_contains(daemon, text));
    close(sock);
}

/* A request whose header claims too many ids, or a flag that does not
 * exist, is malformed: the daemon closes the connection. */
static void a_request_claiming_too_many_releases_or_unknown_flags_is_malformed(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    for (int which = 0; which < 3; which++) {
        int sock = fab_test_raw_hello(daemon->socket);
        fab__request_t stats = {.type = FAB__MSG_STATS, .seq = 2};
        uint8_t buf[FAB__PROTO_MAX];
        size_t len = fab__request_encode(&stats, buf);
        memset(buf + len, 0x11, 8 * (FAB__PROTO_RELEASES_MAX + 1));
        if (which == 0) {
            buf[6] = FAB__PROTO_RELEASES_MAX + 1;
            len += 8 * (FAB__PROTO_RELEASES_MAX + 1);
        } else if (which == 1) {
            buf[7] = 0x02;
        } else {
            buf[6] = 2; /* but only one id follows */
            len += 8;
        }
        assert_int_equal(send(sock, buf, len, MSG_NOSIGNAL), (ssize_t)len);
        assert_int_equal(fab_test_raw_reply(sock, NULL, NULL), -1);
        close(sock);
    }
}

/* A daemon of the test's own, and a client that allocates 2 MiB on it and
 * exports it. */
static fab_client_t *allocate_exported(fab_region_t **region_out, fab_handle_t *handle_out)
{
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    fab_client_t *creator;
    assert_int_equal(fab_client_connect(NULL, &creator), FAB_SUCCESS);
    fab_alloc_props_t props = fab_alloc_props_read_write(0, 2u << 20);
    assert_int_equal(fab_client_allocate(creator, &props, region_out), FAB_SUCCESS);
    assert_int_equal(fab_region_export(*region_out, handle_out), FAB_SUCCESS);
    return creator;
}

/* Through the library: imported regions released in a row (more than one
 * request carries) are all dropped by the next call, and the creator's
 * release then frees the allocation. */
static void imported_regions_released_are_dropped_by_the_next_call(void **state)
{
    (void)state;
    fab_region_t *region;
    fab_handle_t handle;
    fab_client_t *creator = allocate_exported(&region, &handle), *importer;
    assert_int_equal(fab_client_connect(NULL, &importer), FAB_SUCCESS);
    enum { N = 3 * FAB__PROTO_RELEASES_MAX + 1 };
    fab_region_t *imported[N];
    for (int i = 0; i < N; i++)
        assert_int_equal(fab_client_import(importer, &handle, 0, &imported[i]), FAB_SUCCESS);
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(importer, &stats), FAB_SUCCESS);
    assert_int_equal(stats.references, N + 1);
    for (int i = 0; i < N; i++)
        assert_int_equal(fab_region_release(imported[i]), FAB_SUCCESS);
    assert_int_equal(fab_client_stats(importer, &stats), FAB_SUCCESS);
    assert_int_equal(stats.references, 1);
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    bool live = true; /* asked on the creator's connection: after its RELEASE */
    assert_int_equal(fab_client_verify(creator, &handle, &live), FAB_SUCCESS);
    assert_false(live);
    assert_int_equal(fab_client_close(importer), FAB_SUCCESS);
    assert_int_equal(fab_client_close(creator), FAB_SUCCESS);
}

/* A released import's fd goes with its id: closed by the next request that
 * carries the id (right after it is sent), and by a full queue's RELEASE;
 * never more fds wait than ids do. */
static void a_released_imports_fd_is_closed_when_its_id_goes_out(void **state)
{
    (void)state;
    fab_region_t *region;
    fab_handle_t handle;
    fab_client_t *creator = allocate_exported(&region, &handle), *importer;
    assert_int_equal(fab_client_connect(NULL, &importer), FAB_SUCCESS);
    fab_daemon_stats_t stats;
    int before = fab_test_open_fds();
    enum { N = FAB__PROTO_RELEASES_MAX + 2 };
    fab_region_t *imported[N];
    for (int i = 0; i < N; i++)
        assert_int_equal(fab_client_import(importer, &handle, 0, &imported[i]), FAB_SUCCESS);
    assert_int_equal(fab_test_open_fds(), before + N);
    assert_int_equal(fab_region_release(imported[0]), FAB_SUCCESS);
    assert_int_equal(fab_client_stats(importer, &stats), FAB_SUCCESS); /* carries it */
    assert_int_equal(fab_test_open_fds(), before + N - 1);
    /* A queue's worth waits, fds and all; one more finds the queue full:
     * it goes out in a RELEASE of its own with every id, and every fd with
     * them. */
    for (int i = 1; i < N - 1; i++)
        assert_int_equal(fab_region_release(imported[i]), FAB_SUCCESS);
    assert_int_equal(fab_test_open_fds(), before + FAB__PROTO_RELEASES_MAX + 1); /* and the last import's */
    assert_int_equal(fab_region_release(imported[N - 1]), FAB_SUCCESS);
    assert_int_equal(fab_test_open_fds(), before);
    assert_int_equal(fab_client_stats(importer, &stats), FAB_SUCCESS);
    assert_int_equal(stats.references, 1);
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    assert_int_equal(fab_client_close(importer), FAB_SUCCESS);
    assert_int_equal(fab_client_close(creator), FAB_SUCCESS);
}

/* Closing the client closes the fds of releases still queued (the daemon
 * drops their references with the connection). */
static void closing_a_client_closes_the_fds_its_queued_releases_held(void **state)
{
    (void)state;
    fab_region_t *region, *imported;
    fab_handle_t handle;
    fab_client_t *creator = allocate_exported(&region, &handle), *importer;
    int before = fab_test_open_fds();
    assert_int_equal(fab_client_connect(NULL, &importer), FAB_SUCCESS);
    assert_int_equal(fab_client_import(importer, &handle, 0, &imported), FAB_SUCCESS);
    assert_int_equal(fab_region_release(imported), FAB_SUCCESS); /* its id waits */
    assert_int_equal(fab_client_close(importer), FAB_SUCCESS);
    assert_int_equal(fab_test_open_fds(), before);
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    assert_int_equal(fab_client_close(creator), FAB_SUCCESS);
}

/* A version-4 client (no carried ids, a reply to every RELEASE) is served
 * as before; version 3 is not. */
static void a_version_4_client_is_still_served(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    for (uint32_t version = 3; version <= 4; version++) {
        int sock = fab_test_raw_connect(daemon->socket);
        fab__request_t hello = {.type = FAB__MSG_HELLO, .seq = 1};
        hello.u.hello.version = version;
        assert_int_equal(fab_test_raw_call(sock, &hello, -1, NULL, NULL),
                         version == 4 ? FAB_SUCCESS : FAB_ERROR_NOT_SUPPORTED);
        close(sock);
    }
}

/* fab_client_import_many: every good handle imported in its place, every
 * bad one refused in its own, with fab_client_import's errors. */
static void import_many_imports_each_handle_and_refuses_each_bad_one(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    fab_client_t *creator, *importer;
    assert_int_equal(fab_client_connect(NULL, &creator), FAB_SUCCESS);
    assert_int_equal(fab_client_connect(NULL, &importer), FAB_SUCCESS);
    fab_alloc_props_t props = fab_alloc_props_read_write(0, 2u << 20);
    fab_region_t *made[3];
    fab_handle_t handles[3];
    for (int i = 0; i < 3; i++) {
        assert_int_equal(fab_client_allocate(creator, &props, &made[i]), FAB_SUCCESS);
        assert_int_equal(fab_region_export(made[i], &handles[i]), FAB_SUCCESS);
    }
    enum { N = 19 };
    fab_handle_t batch[N];
    for (int i = 0; i < N; i++) {
        batch[i] = handles[i % 3];
        if (i % 5 == 4)
            batch[i].bytes[FAB_HANDLE_TAG_OFFSET] ^= 1; /* forged */
    }
    fab_region_t *regions[N];
    fab_status_t statuses[N];
    assert_int_equal(fab_client_import_many(importer, batch, N, 0, regions, statuses),
                     FAB_ERROR_INVALID_HANDLE);
    int good = 0;
    for (int i = 0; i < N; i++) {
        if (i % 5 == 4) {
            assert_int_equal(statuses[i], FAB_ERROR_INVALID_HANDLE);
            assert_null(regions[i]);
            continue;
        }
        assert_int_equal(statuses[i], FAB_SUCCESS);
        assert_non_null(regions[i]);
        fab_uuid_t want = fab_handle_uuid(&handles[i % 3]), have = fab_region_uuid(regions[i]);
        assert_true(fab_uuid_equal(&want, &have));
        good++;
    }
    fab_daemon_stats_t stats;
    assert_int_equal(fab_client_stats(importer, &stats), FAB_SUCCESS);
    assert_int_equal(stats.references, 3 + good);
    for (int i = 0; i < N; i++) {
        if (regions[i] != NULL)
            assert_int_equal(fab_region_release(regions[i]), FAB_SUCCESS);
    }
    assert_int_equal(fab_client_stats(importer, &stats), FAB_SUCCESS);
    assert_int_equal(stats.references, 3);
    assert_int_equal(fab_client_import_many(importer, NULL, 1, 0, regions, NULL),
                     FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_client_import_many(importer, NULL, 0, 0, NULL, NULL), FAB_SUCCESS);
    for (int i = 0; i < 3; i++)
        assert_int_equal(fab_region_release(made[i]), FAB_SUCCESS);
    assert_int_equal(fab_client_close(importer), FAB_SUCCESS);
    assert_int_equal(fab_client_close(creator), FAB_SUCCESS);
}

/* Whether this build or run is under a memory checker, as region.c asks. */
static bool under_memory_checker(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return true;
#endif
#endif
    /* The valgrind run launches the tests and their daemons under memcheck
     * (cmake/FabmemTesting.cmake, tests/fabric/CMakeLists.txt). */
    const char *launcher = getenv("FABTEST_DAEMON_LAUNCHER");
    return launcher != NULL && *launcher != '\0';
}

/* A released region's record is kept by its client and the next import is
 * made from it, a fresh region in every field; under a memory checker it is
 * freed at once, so that a region used after its release is still found. */
static void a_released_regions_record_makes_the_next_import_only_without_a_checker(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    fab_client_t *creator, *importer;
    assert_int_equal(fab_client_connect(NULL, &creator), FAB_SUCCESS);
    assert_int_equal(fab_client_connect(NULL, &importer), FAB_SUCCESS);
    bool keeps = !under_memory_checker();
    assert_int_equal(fab__region_keeps_spare(), keeps);
    assert_int_equal(importer->keeps_spare, keeps);
    fab_alloc_props_t props = fab_alloc_props_read_write(0, 2u << 20);
    fab_region_t *made;
    fab_handle_t handle;
    assert_int_equal(fab_client_allocate(creator, &props, &made), FAB_SUCCESS);
    assert_int_equal(fab_region_export(made, &handle), FAB_SUCCESS);

    fab_region_t *first;
    char *p;
    assert_int_equal(fab_client_import(importer, &handle, 0, &first), FAB_SUCCESS);
    assert_int_equal(fab_region_map(first, FAB_ACCESS_READ_WRITE, (void **)&p), FAB_SUCCESS);
    strcpy(p, "through the first import");
    assert_int_equal(fab_region_unmap(first, p), FAB_SUCCESS);
    assert_int_equal(fab_region_release(first), FAB_SUCCESS);
    assert_ptr_equal(importer->spare, keeps ? first : NULL);

    fab_region_t *second;
    assert_int_equal(fab_client_import(importer, &handle, 0, &second), FAB_SUCCESS);
    assert_null(importer->spare);
    if (keeps)
        assert_ptr_equal(second, first);
    /* A new region: one reference, no mapping, released once. */
    assert_int_equal(fab_region_map(second, FAB_ACCESS_READ_WRITE, (void **)&p), FAB_SUCCESS);
    assert_string_equal(p, "through the first import");
    assert_int_equal(fab_region_unmap(second, p), FAB_SUCCESS);
    assert_int_equal(fab_region_unmap(second, p), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(fab_region_release(second), FAB_SUCCESS);
    assert_int_equal(fab_region_release(made), FAB_SUCCESS);
    assert_int_equal(fab_client_close(importer), FAB_SUCCESS); /* frees the kept record */
    assert_int_equal(fab_client_close(creator), FAB_SUCCESS);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(carried_releases_are_dropped_before_the_answer_without_a_reply,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_carried_release_of_an_unknown_id_is_logged_and_the_request_answered,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_request_claiming_too_many_releases_or_unknown_flags_is_malformed,
                              fab_test_teardown),
    cmocka_unit_test_teardown(imported_regions_released_are_dropped_by_the_next_call,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_released_imports_fd_is_closed_when_its_id_goes_out,
                              fab_test_teardown),
    cmocka_unit_test_teardown(closing_a_client_closes_the_fds_its_queued_releases_held,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_version_4_client_is_still_served, fab_test_teardown),
    cmocka_unit_test_teardown(import_many_imports_each_handle_and_refuses_each_bad_one,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_released_regions_record_makes_the_next_import_only_without_a_checker,
                              fab_test_teardown),
};

FAB_TEST_MAIN_NO_HELPERS("fabric", tests)
