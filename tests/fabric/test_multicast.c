/* The daemon's multicast teams on the wire (docs/fabric.md, "Multicast
 * teams"), tried as a client that does not play by libcuda's rules would:
 * what names a team (the token's inode, never memory that merely exists),
 * whose member ids are whose, what memory a bind takes, and that the state
 * page a member is handed is the daemon's alone to write. Each test starts
 * its own fabmemd with the built-in topology (node0, 8 GPUs, channel 0). */
#include "daemon_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "src/common/memfd.h"
#include "src/common/proto.h"
#include "src/fabric/client_impl.h"

#define G (2u << 20) /* the built-in topology's granularity */

static fab_client_t *connect_ok(void)
{
    return fab_test_connect_node(NULL);
}

/* One MC_* request; its status, the reply in *reply (may be NULL) and its
 * fds closed unless fds is given. */
static fab_status_t mc(fab_client_t *client, uint16_t type, uint64_t id, int32_t device,
                       uint64_t size, uint64_t off, uint64_t mem_off, int fd_in,
                       fab__reply_t *reply, int fds[2], unsigned *nfds)
{
    fab__request_t rq = {.type = type};
    rq.u.mc.id = id;
    rq.u.mc.device = device;
    rq.u.mc.size = size;
    rq.u.mc.mc_offset = off;
    rq.u.mc.mem_offset = mem_off;
    fab__reply_t r;
    int got[2];
    unsigned n = 0;
    fab_status_t s = fab__client_mc_request(client, &rq, NULL, fd_in, &r, got, &n);
    if (reply)
        *reply = r;
    if (fds && nfds) {
        memcpy(fds, got, sizeof(got));
        *nfds = n;
    } else {
        for (unsigned i = 0; i < n; i++)
            close(got[i]);
    }
    return s;
}

/* A POSIX-only team of `devices` devices, one granule: its token fd. */
static int create_team(fab_client_t *client, uint32_t devices)
{
    fab__request_t rq = {.type = FAB__MSG_MC_CREATE};
    rq.u.mc.count = devices;
    rq.u.mc.types = 1; /* POSIX_FILE_DESCRIPTOR */
    rq.u.mc.size = G;
    rq.u.mc.mc_offset = G;
    fab__reply_t r;
    int fds[2];
    unsigned n = 0;
    assert_int_equal(fab__client_mc_request(client, &rq, NULL, -1, &r, fds, &n), FAB_SUCCESS);
    assert_int_equal(n, 1);
    /* The token is handed out read-only: its bytes mean nothing. */
    assert_int_equal(fcntl(fds[0], F_GETFL) & O_ACCMODE, O_RDONLY);
    return fds[0];
}

/* Join through token: the member id; the shadow memfd in *shadow_out. */
static uint64_t join(fab_client_t *client, int token, int *shadow_out)
{
    fab__reply_t r;
    int fds[2];
    unsigned n = 0;
    assert_int_equal(mc(client, FAB__MSG_MC_JOIN, 0, 0, 0, 0, 0, token, &r, fds, &n), FAB_SUCCESS);
    assert_int_equal(n, 2);
    assert_true(r.u.mc.id != 0);
    assert_int_equal(r.u.mc.size, G);
    close(fds[0]);
    if (shadow_out)
        *shadow_out = fds[1];
    else
        close(fds[1]);
    return r.u.mc.id;
}

static void memory_that_is_no_teams_token_is_not_found(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    fab_client_t *client = connect_ok();
    fab_alloc_props_t props = fab_alloc_props_read_write(0, G);
    fab_region_t *region = NULL;
    assert_int_equal(fab_client_allocate(client, &props, &region), FAB_SUCCESS);
    assert_int_equal(mc(client, FAB__MSG_MC_JOIN, 0, 0, 0, 0, 0, fab_region_fd(region), NULL,
                        NULL, NULL),
                     FAB_ERROR_NOT_FOUND);
    int fd = -1;
    assert_int_equal(fab__memfd_create("mimic", G, &fd), FAB_SUCCESS);
    assert_int_equal(mc(client, FAB__MSG_MC_JOIN, 0, 0, 0, 0, 0, fd, NULL, NULL, NULL),
                     FAB_ERROR_NOT_FOUND);
    close(fd);
    fab_region_release(region);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static void a_team_is_made_only_on_a_region_its_creator_alone_holds(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    fab_client_t *a = connect_ok();
    fab_client_t *b = connect_ok();
    fab_alloc_props_t props = fab_alloc_props_read_write(0, G);
    fab_region_t *mine = NULL, *theirs = NULL;
    assert_int_equal(fab_client_allocate(a, &props, &mine), FAB_SUCCESS);
    fab_handle_t h;
    assert_int_equal(fab_region_export(mine, &h), FAB_SUCCESS);
    assert_int_equal(fab_client_import(b, &h, 0, &theirs), FAB_SUCCESS);
    fab__request_t rq = {.type = FAB__MSG_MC_CREATE};
    rq.u.mc.count = 1;
    rq.u.mc.types = 8; /* FABRIC */
    rq.u.mc.size = G;
    rq.u.mc.mc_offset = G;
    fab__reply_t r;
    int fds[2];
    unsigned n = 0;
    /* Someone else holds it (their import would turn into a team). */
    assert_int_equal(fab__client_mc_request(a, &rq, mine, -1, &r, fds, &n),
                     FAB_ERROR_INVALID_VALUE);
    /* An importer is no creator. */
    assert_int_equal(fab__client_mc_request(b, &rq, theirs, -1, &r, fds, &n),
                     FAB_ERROR_INVALID_VALUE);
    fab_region_release(theirs);
    fab_daemon_stats_t stats; /* the release rides on b's next request */
    assert_int_equal(fab_client_stats(b, &stats), FAB_SUCCESS);
    /* Held by its creator alone: a team, once. */
    assert_int_equal(fab__client_mc_request(a, &rq, mine, -1, &r, fds, &n), FAB_SUCCESS);
    assert_int_equal(fab__client_mc_request(a, &rq, mine, -1, &r, fds, &n),
                     FAB_ERROR_INVALID_VALUE);
    fab_region_release(mine);
    assert_int_equal(fab_client_close(b), FAB_SUCCESS);
    assert_int_equal(fab_client_close(a), FAB_SUCCESS);
}

static void a_member_id_serves_its_own_connection_alone(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    fab_client_t *a = connect_ok();
    fab_client_t *b = connect_ok();
    int token = create_team(a, 2);
    uint64_t id = join(a, token, NULL);
    const uint16_t types[] = {FAB__MSG_MC_ADD, FAB__MSG_MC_SYNC, FAB__MSG_MC_UNBIND,
                              FAB__MSG_MC_LEAVE};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        assert_int_equal(mc(b, types[i], id, 0, G, 0, 0, -1, NULL, NULL, NULL),
                         FAB_ERROR_INVALID_VALUE);
    assert_int_equal(mc(a, FAB__MSG_MC_ADD, id, 0, 0, 0, 0, -1, NULL, NULL, NULL), FAB_SUCCESS);
    assert_int_equal(mc(a, FAB__MSG_MC_LEAVE, id, 0, 0, 0, 0, -1, NULL, NULL, NULL), FAB_SUCCESS);
    close(token);
    assert_int_equal(fab_client_close(b), FAB_SUCCESS);
    assert_int_equal(fab_client_close(a), FAB_SUCCESS);
}

static void a_bind_takes_only_sealed_writable_memory_that_holds_the_range(void **state)
{
    (void)state;
    fab_test_daemon_t *d = fab_test_daemon_start(NULL, NULL);
    assert_non_null(d);
    fab_client_t *client = connect_ok();
    int fds_before = fab_test_daemon_fd_count(d);
    int token = create_team(client, 1);
    uint64_t id = join(client, token, NULL);
    assert_int_equal(mc(client, FAB__MSG_MC_ADD, id, 0, 0, 0, 0, -1, NULL, NULL, NULL),
                     FAB_SUCCESS);
    /* Unsealed: its holder could shrink it under the daemon's mapping. */
    int plain = memfd_create("plain", MFD_CLOEXEC);
    assert_true(plain >= 0);
    assert_int_equal(ftruncate(plain, G), 0);
    assert_int_equal(mc(client, FAB__MSG_MC_BIND, id, 0, G, 0, 0, plain, NULL, NULL, NULL),
                     FAB_ERROR_INVALID_VALUE);
    close(plain);
    int sealed = -1;
    assert_int_equal(fab__memfd_create("sealed", G, &sealed), FAB_SUCCESS);
    int ro = fab__memfd_reopen_read_only(sealed);
    assert_true(ro >= 0);
    assert_int_equal(mc(client, FAB__MSG_MC_BIND, id, 0, G, 0, 0, ro, NULL, NULL, NULL),
                     FAB_ERROR_INVALID_VALUE); /* memory the sender may only read */
    close(ro);
    assert_int_equal(mc(client, FAB__MSG_MC_BIND, id, 0, G, 0, G, sealed, NULL, NULL, NULL),
                     FAB_ERROR_INVALID_VALUE); /* past the memory's end */
    assert_int_equal(mc(client, FAB__MSG_MC_BIND, id, 0, 2 * (uint64_t)G, 0, 0, sealed, NULL,
                        NULL, NULL),
                     FAB_ERROR_INVALID_VALUE); /* past the team's end */
    assert_int_equal(mc(client, FAB__MSG_MC_BIND, id, 1, G, 0, 0, sealed, NULL, NULL, NULL),
                     FAB_ERROR_INVALID_DEVICE); /* a device not in the team */
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(mc(client, FAB__MSG_MC_BIND, id, 0, G, 0, 0, p[0], NULL, NULL, NULL),
                     FAB_ERROR_INVALID_VALUE);
    close(p[0]);
    close(p[1]);
    fab__reply_t r;
    assert_int_equal(mc(client, FAB__MSG_MC_BIND, id, 0, G, 0, 0, sealed, &r, NULL, NULL),
                     FAB_SUCCESS);
    assert_int_equal(mc(client, FAB__MSG_MC_BIND, id, 0, G, 0, 0, sealed, NULL, NULL, NULL),
                     FAB_ERROR_INVALID_VALUE); /* the device has memory there */
    close(sealed);
    /* Leaving drops the bind, the member and, with its last member, the
     * team: the daemon holds no descriptor more than before. */
    assert_int_equal(mc(client, FAB__MSG_MC_LEAVE, id, 0, 0, 0, 0, -1, NULL, NULL, NULL),
                     FAB_SUCCESS);
    close(token);
    assert_int_equal(fab_test_daemon_fd_count_settled(d, fds_before), fds_before);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static void a_member_that_disconnects_before_the_team_is_complete_marks_it_lost(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    fab_client_t *a = connect_ok();
    fab_client_t *b = connect_ok();
    int token = create_team(a, 2);
    int shadow = -1;
    uint64_t id = join(a, token, &shadow);
    assert_int_equal(mc(a, FAB__MSG_MC_ADD, id, 0, 0, 0, 0, -1, NULL, NULL, NULL), FAB_SUCCESS);
    /* The state page is the daemon's: its member can only read it. */
    assert_int_equal(fcntl(shadow, F_GETFL) & O_ACCMODE, O_RDONLY);
    errno = 0;
    assert_true(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, shadow, 0) == MAP_FAILED);
    assert_int_equal(errno, EACCES);
    const fab__mc_state_t *st = mmap(NULL, 4096, PROT_READ, MAP_SHARED, shadow, 0);
    assert_true(st != MAP_FAILED);
    assert_int_equal(st->ndevices, 1);
    assert_int_equal(st->num_devices, 2);
    assert_int_equal(st->lost, 0);
    (void)join(b, token, NULL);
    assert_int_equal(fab_client_close(b), FAB_SUCCESS); /* gone without adding its device */
    for (int i = 0; i < 1000 && __atomic_load_n(&st->lost, __ATOMIC_ACQUIRE) == 0; i++) {
        /* The daemon handles the hang-up on its own time: ask it something,
         * which it answers after the hang-up it saw first. */
        fab_daemon_stats_t stats;
        assert_int_equal(fab_client_stats(a, &stats), FAB_SUCCESS);
    }
    assert_int_equal(st->lost, 1);
    munmap((void *)st, 4096);
    close(shadow);
    close(token);
    assert_int_equal(fab_client_close(a), FAB_SUCCESS);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(memory_that_is_no_teams_token_is_not_found, fab_test_teardown),
    cmocka_unit_test_teardown(a_team_is_made_only_on_a_region_its_creator_alone_holds,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_member_id_serves_its_own_connection_alone, fab_test_teardown),
    cmocka_unit_test_teardown(a_bind_takes_only_sealed_writable_memory_that_holds_the_range,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_member_that_disconnects_before_the_team_is_complete_marks_it_lost,
                              fab_test_teardown),
};

FAB_TEST_MAIN_NO_HELPERS("fabric", tests)
