/* The memory's kind in an IMPORT reply (protocol 7): a client that said
 * HELLO 7 is told whether what it imported is plain memory or a multicast
 * team's token, so that libcuda's import of plain memory asks no MC_JOIN; a
 * client that said an older version gets the reply it can read, without
 * the byte. The decoder takes both lengths and refuses a kind it does not
 * know. (That a team's token says so, and is joined, is what the cuda
 * multicast tests across processes rely on.) Raw connections speak the wire
 * protocol directly (proto.h). */
#include "daemon_harness.h"

#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "fabmem.h"
#include "src/common/proto.h"

#define MIB2 (2u * 1024 * 1024)

/* Import handle on a raw connection that said HELLO version. */
static fab__reply_t raw_import(const char *path, uint32_t version, const fab_handle_t *handle)
{
    int sock = fab_test_raw_connect(path);
    fab__request_t hello = {.type = FAB__MSG_HELLO, .seq = 1};
    hello.u.hello.version = version;
    assert_int_equal(fab_test_raw_call(sock, &hello, -1, NULL, NULL), FAB_SUCCESS);
    fab__request_t import = {.type = FAB__MSG_IMPORT, .seq = 2};
    import.u.import.handle = *handle;
    fab__reply_t reply;
    int fd = -1;
    assert_int_equal(fab_test_raw_call(sock, &import, -1, &reply, &fd), FAB_SUCCESS);
    assert_true(fd >= 0);
    close(fd);
    close(sock);
    return reply;
}

static void an_import_reply_says_plain_memory_to_a_version_7_client_only(void **state)
{
    (void)state;
    fab_test_daemon_t *daemon = fab_test_daemon_start(NULL, NULL);
    assert_non_null(daemon);
    fab_client_t *client;
    assert_int_equal(fab_client_connect(NULL, &client), FAB_SUCCESS);
    fab_alloc_props_t props = fab_alloc_props_read_write(0, MIB2);
    fab_region_t *region;
    fab_handle_t handle;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_SUCCESS);
    assert_int_equal(fab_region_export(region, &handle), FAB_SUCCESS);
    fab__reply_t reply = raw_import(daemon->socket, FAB__PROTO_VERSION_MEMORY_KIND, &handle);
    assert_int_equal(reply.u.import.kind, FAB__MEMORY_PLAIN);
    assert_int_equal(reply.u.import.size, MIB2);
    assert_int_equal(fab_region_export(region, &handle), FAB_SUCCESS);
    reply = raw_import(daemon->socket, FAB__PROTO_VERSION_MEMORY_KIND - 1, &handle);
    assert_int_equal(reply.u.import.kind, FAB__MEMORY_UNSAID);
    assert_int_equal(reply.u.import.size, MIB2);
    assert_int_equal(fab_region_release(region), FAB_SUCCESS);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static void an_import_reply_round_trips_its_kind_and_refuses_an_unknown_one(void **state)
{
    (void)state;
    uint8_t buf[FAB__PROTO_MAX];
    static const uint8_t kinds[] = {FAB__MEMORY_UNSAID, FAB__MEMORY_PLAIN, FAB__MEMORY_MC_TOKEN};
    for (size_t i = 0; i < sizeof(kinds); i++) {
        fab__reply_t reply = {.type = FAB__MSG_IMPORT, .seq = 9};
        reply.u.import.region = 42;
        reply.u.import.size = MIB2;
        reply.u.import.kind = kinds[i];
        size_t len = fab__reply_encode(&reply, buf);
        assert_int_equal(len, FAB__PROTO_HEADER + 37 + (kinds[i] != FAB__MEMORY_UNSAID));
        fab__reply_t back;
        assert_int_equal(fab__reply_decode(buf, len, &back), FAB_SUCCESS);
        assert_int_equal(back.u.import.kind, kinds[i]);
        assert_int_equal(back.u.import.region, 42);
    }
    /* A kind byte no daemon sends, and one on an ADOPT reply, are malformed. */
    fab__reply_t reply = {.type = FAB__MSG_IMPORT, .seq = 9};
    reply.u.import.kind = FAB__MEMORY_PLAIN;
    size_t len = fab__reply_encode(&reply, buf);
    buf[len - 1] = 7;
    fab__reply_t back;
    assert_int_not_equal(fab__reply_decode(buf, len, &back), FAB_SUCCESS);
    buf[len - 1] = FAB__MEMORY_PLAIN;
    buf[4] = (uint8_t)(FAB__MSG_ADOPT | FAB__MSG_REPLY);
    buf[5] = (uint8_t)((FAB__MSG_ADOPT | FAB__MSG_REPLY) >> 8);
    assert_int_not_equal(fab__reply_decode(buf, len, &back), FAB_SUCCESS);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(an_import_reply_says_plain_memory_to_a_version_7_client_only,
                              fab_test_teardown),
    cmocka_unit_test(an_import_reply_round_trips_its_kind_and_refuses_an_unknown_one),
};

FAB_TEST_MAIN_NO_HELPERS("fabric", tests)
