/* The daemon's multicast teams on the wire (docs/fabric.md, "Multicast
 * teams"), tried as a client that does not play by libcuda's rules would:
 * what names a team (the token's inode, never memory that merely exists),
 * whose member ids are whose, what memory a bind takes, and that the state
 * page a member is handed is the daemon's alone to write, and what ranges
 * and lengths a ranged synchronisation (multimem.st and .red) takes. Each test starts
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

/* One MC_* request, rq; its status, the reply in *reply (may be NULL) and
 * its fds closed unless fds is given. */
static fab_status_t mc_send(fab_client_t *client, fab__request_t *rq, int fd_in,
                            fab__reply_t *reply, int fds[2], unsigned *nfds)
{
    fab__reply_t r;
    int got[2];
    unsigned n = 0;
    fab_status_t s = fab__client_mc_request(client, rq, NULL, fd_in, &r, got, &n);
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

/* mc_send of a request with these fields. */
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
    return mc_send(client, &rq, fd_in, reply, fds, nfds);
}

/* A POSIX-only team of `devices` devices, size bytes: its token fd. */
static int create_team_of(fab_client_t *client, uint32_t devices, uint64_t size)
{
    fab__request_t rq = {.type = FAB__MSG_MC_CREATE};
    rq.u.mc.count = devices;
    rq.u.mc.types = 1; /* POSIX_FILE_DESCRIPTOR */
    rq.u.mc.size = size;
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

/* One granule. */
static int create_team(fab_client_t *client, uint32_t devices)
{
    return create_team_of(client, devices, G);
}

/* Join through token of a team of size bytes: the member id; the staging
 * and shadow memfds in *staging_out and *shadow_out (either may be NULL:
 * closed). */
static uint64_t join_team_of(fab_client_t *client, int token, uint64_t size, int *staging_out,
                             int *shadow_out)
{
    fab__reply_t r;
    int fds[2];
    unsigned n = 0;
    assert_int_equal(mc(client, FAB__MSG_MC_JOIN, 0, 0, 0, 0, 0, token, &r, fds, &n), FAB_SUCCESS);
    assert_int_equal(n, 2);
    assert_true(r.u.mc.id != 0);
    assert_int_equal(r.u.mc.size, size);
    if (staging_out)
        *staging_out = fds[0];
    else
        close(fds[0]);
    if (shadow_out)
        *shadow_out = fds[1];
    else
        close(fds[1]);
    return r.u.mc.id;
}

static uint64_t join_keeping(fab_client_t *client, int token, int *staging_out, int *shadow_out)
{
    return join_team_of(client, token, G, staging_out, shadow_out);
}

static uint64_t join(fab_client_t *client, int token, int *shadow_out)
{
    return join_keeping(client, token, NULL, shadow_out);
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

/* ---- the ranged MC_SYNC (multimem.st and .red, published at once) ------------------- */

/* MC_SYNC with every field its ranged forms read. */
static fab_status_t sync_rq(fab_client_t *client, uint64_t id, uint32_t types, uint32_t count,
                            uint64_t size, uint64_t off, uint64_t mem_off)
{
    fab__request_t rq = {.type = FAB__MSG_MC_SYNC};
    rq.u.mc.id = id;
    rq.u.mc.types = types;
    rq.u.mc.count = count;
    rq.u.mc.size = size;
    rq.u.mc.mc_offset = off;
    rq.u.mc.mem_offset = mem_off;
    return mc_send(client, &rq, -1, NULL, NULL, NULL);
}

/* Two members of a two-device team, on connections a and b, each with one
 * granule of memory bound (mapped here: mem[0], mem[1]) and a's staging
 * copy mapped read-write (the multicast mapping's bytes). */
typedef struct pair {
    fab_client_t *a, *b;
    int token;
    uint64_t id[2];
    uint8_t *staging, *mem[2];
} pair_t;

static void pair_start(pair_t *p)
{
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    p->a = connect_ok();
    p->b = connect_ok();
    p->token = create_team(p->a, 2);
    int staging = -1;
    p->id[0] = join_keeping(p->a, p->token, &staging, NULL);
    p->id[1] = join(p->b, p->token, NULL);
    fab_client_t *c[2] = {p->a, p->b};
    for (int i = 0; i < 2; i++)
        assert_int_equal(mc(c[i], FAB__MSG_MC_ADD, p->id[i], i, 0, 0, 0, -1, NULL, NULL, NULL),
                         FAB_SUCCESS);
    for (int i = 0; i < 2; i++) {
        int fd = -1;
        assert_int_equal(fab__memfd_create("bound", G, &fd), FAB_SUCCESS);
        p->mem[i] = mmap(NULL, G, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        assert_true(p->mem[i] != MAP_FAILED);
        assert_int_equal(mc(c[i], FAB__MSG_MC_BIND, p->id[i], i, G, 0, 0, fd, NULL, NULL, NULL),
                         FAB_SUCCESS);
        close(fd);
    }
    p->staging = mmap(NULL, G, PROT_READ | PROT_WRITE, MAP_SHARED, staging, 0);
    assert_true(p->staging != MAP_FAILED);
    close(staging);
}

static void pair_end(pair_t *p)
{
    munmap(p->staging, G);
    munmap(p->mem[0], G);
    munmap(p->mem[1], G);
    close(p->token);
    assert_int_equal(fab_client_close(p->b), FAB_SUCCESS);
    assert_int_equal(fab_client_close(p->a), FAB_SUCCESS);
}

static void a_ranged_sync_writes_or_folds_the_staging_bytes_into_every_bind_at_once(void **state)
{
    (void)state;
    pair_t p;
    pair_start(&p);
    /* A store: the range, to the byte, whatever the snapshot holds. */
    memcpy(p.staging + 101, "abc", 3);
    p.mem[1][104] = 'z'; /* a byte past the range stays the peer's */
    assert_int_equal(sync_rq(p.a, p.id[0], 0, 0, 3, 101, 0), FAB_SUCCESS);
    assert_memory_equal(p.mem[0] + 101, "abc", 3);
    assert_memory_equal(p.mem[1] + 101, "abc", 3);
    assert_int_equal(p.mem[1][104], 'z');
    assert_int_equal(p.mem[1][100], 0);
    p.mem[1][101] = 'q'; /* the peer's own write, then the same store again */
    assert_int_equal(sync_rq(p.a, p.id[0], 0, 0, 3, 101, 0), FAB_SUCCESS);
    assert_int_equal(p.mem[1][101], 'a');
    /* A reduction: the operand in the staging copy, folded into each copy;
     * the staging copy then reads the sender's own. */
    uint32_t seven = 7, five = 5, got = 0;
    memcpy(p.mem[1] + 200, &seven, 4);
    memcpy(p.staging + 200, &five, 4);
    assert_int_equal(sync_rq(p.a, p.id[0], FAB__MC_OP_ADD_U32, 1, 4, 200, 0), FAB_SUCCESS);
    memcpy(&got, p.mem[1] + 200, 4);
    assert_int_equal(got, 12);
    memcpy(&got, p.mem[0] + 200, 4);
    assert_int_equal(got, 5);
    memcpy(&got, p.staging + 200, 4);
    assert_int_equal(got, 5);
    uint64_t big = 0x100000000ull, sum = 0;
    memcpy(p.staging + 256, &big, 8);
    assert_int_equal(sync_rq(p.a, p.id[0], FAB__MC_OP_ADD_U64, 1, 8, 256, 0), FAB_SUCCESS);
    assert_int_equal(sync_rq(p.a, p.id[0], 0, 0, 0, 0, 0), FAB_SUCCESS); /* a full one too */
    memcpy(p.staging + 256, &big, 8);
    assert_int_equal(sync_rq(p.a, p.id[0], FAB__MC_OP_ADD_U64, 1, 8, 256, 0), FAB_SUCCESS);
    memcpy(&sum, p.mem[1] + 256, 8);
    assert_true(sum == 2 * big);
    pair_end(&p);
}

static void a_ranged_sync_outside_the_team_or_with_a_forged_length_is_refused(void **state)
{
    (void)state;
    pair_t p;
    pair_start(&p);
    memset(p.staging, 0x5a, G);
    const uint64_t g = G;
    /* Not the sender's member. */
    assert_int_equal(sync_rq(p.b, p.id[0], 0, 0, 4, 0, 0), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(sync_rq(p.b, p.id[0], FAB__MC_OP_ADD_U32, 1, 4, 0, 0),
                     FAB_ERROR_INVALID_VALUE);
    /* A store outside the team, or naming fields a store has not. */
    assert_int_equal(sync_rq(p.a, p.id[0], 0, 0, 1, g, 0), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(sync_rq(p.a, p.id[0], 0, 0, g + 1, 0, 0), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(sync_rq(p.a, p.id[0], 0, 0, 8, UINT64_MAX - 3, 0), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(sync_rq(p.a, p.id[0], 0, 0, UINT64_MAX, 8, 0), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(sync_rq(p.a, p.id[0], 0, 1, 4, 0, 0), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(sync_rq(p.a, p.id[0], 0, 0, 4, 0, 4), FAB_ERROR_INVALID_VALUE);
    /* A reduction whose lengths disagree, that lies outside, is misaligned,
     * or names no operation. */
    assert_int_equal(sync_rq(p.a, p.id[0], FAB__MC_OP_ADD_U32, 1, 8, 0, 0),
                     FAB_ERROR_INVALID_VALUE);
    assert_int_equal(sync_rq(p.a, p.id[0], FAB__MC_OP_ADD_U32, 0, 0, 0, 0),
                     FAB_ERROR_INVALID_VALUE);
    assert_int_equal(sync_rq(p.a, p.id[0], FAB__MC_OP_ADD_U32, UINT32_MAX,
                             (uint64_t)UINT32_MAX * 4, 0, 0),
                     FAB_ERROR_INVALID_VALUE);
    assert_int_equal(sync_rq(p.a, p.id[0], FAB__MC_OP_ADD_U64, 1, 8, g - 4, 0),
                     FAB_ERROR_INVALID_VALUE);
    assert_int_equal(sync_rq(p.a, p.id[0], FAB__MC_OP_ADD_U64, 1, 8, 4, 0),
                     FAB_ERROR_INVALID_VALUE);
    assert_int_equal(sync_rq(p.a, p.id[0], 99, 1, 4, 0, 0), FAB_ERROR_INVALID_VALUE);
    assert_int_equal(sync_rq(p.a, p.id[0], FAB__MC_OP_ADD_U32, 1, 4, 0, 4),
                     FAB_ERROR_INVALID_VALUE);
    /* None of them wrote anything. */
    for (size_t i = 0; i < G; i++) {
        if (p.mem[0][i] != 0 || p.mem[1][i] != 0)
            fail_msg("byte %zu was written", i);
    }
    pair_end(&p);
}

/* ---- memory never written costs nothing (the holes of the memfds) ---------------------- */

#define BIG (16 * (uint64_t)G) /* a team of 32 MiB, as NCCL's NVLS buffers are hundreds */

/* The first offset at or after off of fd that holds data; -1: none. */
static off_t data_at(int fd, off_t off)
{
    off_t at = lseek(fd, off, SEEK_DATA);
    if (at < 0)
        assert_int_equal(errno, ENXIO);
    return at;
}

/* A one-device team of BIG bytes on a fresh daemon, joined and added: the
 * member id, its staging and shadow memfds. */
static uint64_t big_member(fab_client_t **client, int *token, int *staging, int *shadow)
{
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    *client = connect_ok();
    *token = create_team_of(*client, 1, BIG);
    uint64_t id = join_team_of(*client, *token, BIG, staging, shadow);
    assert_int_equal(mc(*client, FAB__MSG_MC_ADD, id, 0, 0, 0, 0, -1, NULL, NULL, NULL),
                     FAB_SUCCESS);
    return id;
}

static void the_hole_helpers_count_all_as_data_where_the_kernel_cannot_say(void **state)
{
    (void)state;
    assert_int_equal(fab__memfd_data_from(-1, 10, 100), 10);
    assert_int_equal(fab__memfd_hole_from(-1, 10, 100), 100);
    int fd = -1;
    assert_int_equal(fab__memfd_create("holes", 4 * 4096, &fd), FAB_SUCCESS);
    assert_int_equal(fab__memfd_data_from(fd, 0, 4 * 4096), 4 * 4096); /* all holes */
    assert_int_equal(pwrite(fd, "d", 1, 4096 + 7), 1);
    assert_int_equal(fab__memfd_data_from(fd, 0, 4 * 4096), 4096);
    assert_int_equal(fab__memfd_data_from(fd, 0, 100), 100); /* none before the end asked */
    assert_int_equal(fab__memfd_hole_from(fd, 4096, 4 * 4096), 2 * 4096);
    assert_int_equal(fab__memfd_hole_from(fd, 0, 4 * 4096), 0);
    /* Zeroing through a mapping gives whole pages back, writes the rest. */
    uint8_t *p = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    assert_true(p != MAP_FAILED);
    memset(p, 0x77, 4 * 4096);
    fab__memfd_zero_mapped(p + 100, 3 * 4096);
    assert_int_equal(p[99], 0x77);
    assert_int_equal(p[100], 0);
    assert_int_equal(p[3 * 4096 + 99], 0);
    assert_int_equal(p[3 * 4096 + 100], 0x77);
    assert_int_equal(fab__memfd_hole_from(fd, 0, 4 * 4096), 4096); /* pages 1 and 2 given back */
    assert_int_equal(fab__memfd_data_from(fd, 4096, 4 * 4096), 3 * 4096);
    munmap(p, 4 * 4096);
    close(fd);
}

static void a_bind_copies_what_the_memory_holds_and_allocates_none_of_the_rest(void **state)
{
    (void)state;
    fab_client_t *client;
    int token, staging, shadow, mem = -1;
    uint64_t id = big_member(&client, &token, &staging, &shadow);
    assert_int_equal(fab__memfd_create("bound", BIG, &mem), FAB_SUCCESS);
    const off_t at = 5 * (off_t)G + 4096;
    assert_int_equal(pwrite(mem, "written", 7, at), 7);
    assert_int_equal(mc(client, FAB__MSG_MC_BIND, id, 0, BIG, 0, 0, mem, NULL, NULL, NULL),
                     FAB_SUCCESS);
    /* The staging copy (the multicast mapping's bytes) holds the written
     * page and nothing else; so does the snapshot, after the state page. */
    char got[7];
    assert_int_equal(pread(staging, got, 7, at), 7);
    assert_memory_equal(got, "written", 7);
    off_t d = data_at(staging, 0);
    assert_true(d >= 5 * (off_t)G && d <= at);
    assert_true(lseek(staging, d, SEEK_HOLE) <= 6 * (off_t)G);
    assert_int_equal(data_at(staging, 6 * (off_t)G), -1);
    assert_true(fab_test_reads_zeros(staging, 0, 4096) && fab_test_reads_zeros(staging, at + 7, 4096));
    d = data_at(shadow, 4096);
    assert_true(d >= 4096 + 5 * (off_t)G && d <= 4096 + at);
    assert_int_equal(pread(shadow, got, 7, 4096 + at), 7);
    assert_memory_equal(got, "written", 7);
    assert_int_equal(data_at(shadow, 4096 + 6 * (off_t)G), -1); /* nor the sums */
    close(mem);
    close(staging);
    close(shadow);
    close(token);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static void a_bind_over_bytes_an_earlier_bind_left_reads_the_new_memorys_zeros(void **state)
{
    (void)state;
    fab_client_t *client;
    int token, staging, shadow, old = -1, fresh = -1;
    uint64_t id = big_member(&client, &token, &staging, &shadow);
    assert_int_equal(fab__memfd_create("old", G, &old), FAB_SUCCESS);
    uint8_t *p = mmap(NULL, G, PROT_READ | PROT_WRITE, MAP_SHARED, old, 0);
    assert_true(p != MAP_FAILED);
    memset(p, 0x5a, G);
    munmap(p, G);
    assert_int_equal(mc(client, FAB__MSG_MC_BIND, id, 0, G, G, 0, old, NULL, NULL, NULL),
                     FAB_SUCCESS);
    assert_false(fab_test_reads_zeros(staging, G, G));
    assert_int_equal(mc(client, FAB__MSG_MC_UNBIND, id, 0, G, G, 0, -1, NULL, NULL, NULL),
                     FAB_SUCCESS);
    /* Fresh memory there: never written, so zeros, in the staging copy and
     * in the snapshot, and given back, not written as zeros. */
    assert_int_equal(fab__memfd_create("fresh", G, &fresh), FAB_SUCCESS);
    assert_int_equal(pwrite(fresh, "x", 1, 12345), 1); /* one page it has */
    assert_int_equal(mc(client, FAB__MSG_MC_BIND, id, 0, G, G, 0, fresh, NULL, NULL, NULL),
                     FAB_SUCCESS);
    assert_true(fab_test_reads_zeros(staging, G, 12345) && fab_test_reads_zeros(staging, G + 12346, G - 12346));
    assert_true(fab_test_reads_zeros(shadow, 4096 + G, 12345) && fab_test_reads_zeros(shadow, 4096 + G + 12346, G - 12346));
    char x = 0;
    assert_int_equal(pread(staging, &x, 1, G + 12345), 1);
    assert_int_equal(x, 'x');
    assert_true(data_at(staging, 0) >= G + 8192 && lseek(staging, G + 12345, SEEK_HOLE) <= G + 16384);
    close(old);
    close(fresh);
    close(staging);
    close(shadow);
    close(token);
    assert_int_equal(fab_client_close(client), FAB_SUCCESS);
}

static void a_full_sync_of_a_large_team_reads_only_the_pages_written(void **state)
{
    (void)state;
    assert_non_null(fab_test_daemon_start(NULL, NULL));
    fab_client_t *a = connect_ok(), *b = connect_ok();
    int token = create_team_of(a, 2, BIG), staging = -1, shadow = -1, mem[2];
    uint64_t id[2] = {join_team_of(a, token, BIG, &staging, &shadow),
                      join_team_of(b, token, BIG, NULL, NULL)};
    fab_client_t *c[2] = {a, b};
    for (int i = 0; i < 2; i++)
        assert_int_equal(mc(c[i], FAB__MSG_MC_ADD, id[i], i, 0, 0, 0, -1, NULL, NULL, NULL),
                         FAB_SUCCESS);
    /* The daemon looks for holes through descriptors of its own: these
     * share their offsets with the ones it received, which must not move. */
    assert_int_equal(lseek(staging, 777, SEEK_SET), 777);
    assert_int_equal(lseek(shadow, 777, SEEK_SET), 777);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(fab__memfd_create("bound", BIG, &mem[i]), FAB_SUCCESS);
        assert_int_equal(lseek(mem[i], 777, SEEK_SET), 777);
        assert_int_equal(mc(c[i], FAB__MSG_MC_BIND, id[i], i, BIG, 0, 0, mem[i], NULL, NULL, NULL),
                         FAB_SUCCESS);
    }
    /* A kernel of a's stored a page through the multicast mapping; its end
     * synchronises the whole team. */
    const off_t at = 11 * (off_t)G + 8192;
    assert_int_equal(pwrite(staging, "stored", 6, at), 6);
    assert_int_equal(sync_rq(a, id[0], 0, 0, 0, 0, 0), FAB_SUCCESS);
    char got[6];
    assert_int_equal(pread(mem[1], got, 6, at), 6);
    assert_memory_equal(got, "stored", 6); /* the peer's memory has it */
    assert_int_equal(pread(mem[0], got, 6, at), 6);
    assert_memory_equal(got, "stored", 6); /* and a's own */
    int held[4] = {mem[0], mem[1], staging, shadow};
    for (int i = 0; i < 4; i++)
        assert_int_equal(lseek(held[i], 0, SEEK_CUR), 777);
    /* Nothing else of any of them was read into being: each holds data in
     * that page's neighbourhood alone. */
    int fds[4] = {mem[0], mem[1], staging, shadow};
    off_t base[4] = {0, 0, 0, 4096};
    for (int i = 0; i < 4; i++) {
        off_t d = data_at(fds[i], base[i]);
        if (d < base[i] + 11 * (off_t)G || d > base[i] + at)
            fail_msg("memfd %d holds data at %lld, before the written page", i, (long long)d);
        assert_int_equal(data_at(fds[i], base[i] + 12 * (off_t)G), -1);
    }
    for (int i = 0; i < 2; i++)
        close(mem[i]);
    close(staging);
    close(shadow);
    close(token);
    assert_int_equal(fab_client_close(b), FAB_SUCCESS);
    assert_int_equal(fab_client_close(a), FAB_SUCCESS);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(the_hole_helpers_count_all_as_data_where_the_kernel_cannot_say),
    cmocka_unit_test_teardown(a_bind_copies_what_the_memory_holds_and_allocates_none_of_the_rest,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_bind_over_bytes_an_earlier_bind_left_reads_the_new_memorys_zeros,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_full_sync_of_a_large_team_reads_only_the_pages_written,
                              fab_test_teardown),
    cmocka_unit_test_teardown(memory_that_is_no_teams_token_is_not_found, fab_test_teardown),
    cmocka_unit_test_teardown(a_team_is_made_only_on_a_region_its_creator_alone_holds,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_member_id_serves_its_own_connection_alone, fab_test_teardown),
    cmocka_unit_test_teardown(a_bind_takes_only_sealed_writable_memory_that_holds_the_range,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_member_that_disconnects_before_the_team_is_complete_marks_it_lost,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_ranged_sync_writes_or_folds_the_staging_bytes_into_every_bind_at_once,
                              fab_test_teardown),
    cmocka_unit_test_teardown(a_ranged_sync_outside_the_team_or_with_a_forged_length_is_refused,
                              fab_test_teardown),
};

FAB_TEST_MAIN_NO_HELPERS("fabric", tests)
