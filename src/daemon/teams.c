/* Multicast teams in the daemon (see multicast.h): the team table, keyed by
 * the inode of the team's token memory, the members and their binds, and
 * the copies a synchronisation and a reduction make. Everything a member
 * could name is checked against what this file recorded: a member id is
 * random and belongs to one connection, a bind's range was checked against
 * the team and the memory when it was made, and the memory is mapped here
 * once, at the bind, from a sealed memfd that no holder can shrink.
 *
 * What each member holds of the team: its staging memfd (read-write, its
 * multicast mapping's bytes) and a read-only descriptor of its shadow memfd,
 * whose first page is the team's state (fab__mc_state_t, the futex the
 * member waits on), then the snapshot of its staging copy at its last
 * synchronisation, then the sums of its last reduction. */
#include "src/daemon/teams_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "src/common/log.h"
#include "src/common/memfd.h"
#include "src/common/topology_impl.h"
#include "src/daemon/map.h"
#include "src/daemon/registry_impl.h"

struct fab__mcs {
    const fab_topology_t *topology;
    fab__map_t teams;   /* token inode -> team */
    fab__map_t members; /* member id -> member, every team's */
};

fab__mcs_t *fab__mcs_create(const fab_topology_t *topology)
{
    fab__mcs_t *mcs = calloc(1, sizeof(*mcs));
    if (mcs)
        mcs->topology = topology;
    return mcs;
}

static fab__mc_state_t *fab__mc_state(const fab__mc_member_t *m)
{
    return (fab__mc_state_t *)(void *)m->shadow;
}

/* Every member's state page says what the team is now; waiters wake. */
static void fab__mc_publish(fab__mc_team_t *team)
{
    for (unsigned i = 0; i < team->nmembers; i++) {
        fab__mc_state_t *st = fab__mc_state(team->members[i]);
        st->num_devices = team->num_devices;
        st->binds = team->binds_ever;
        __atomic_store_n(&st->lost, team->lost ? 1u : 0u, __ATOMIC_RELEASE);
        __atomic_store_n(&st->ndevices, team->ndevices, __ATOMIC_RELEASE);
        (void)syscall(SYS_futex, &st->ndevices, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    }
}

static void fab__mc_bind_free(fab__mc_team_t *team, unsigned slot)
{
    fab__mc_bind_t *b = team->binds[slot];
    munmap(b->map, b->size);
    if (b->holes >= 0)
        close(b->holes);
    free(b);
    team->binds[slot] = NULL;
}

static void fab__mc_team_free(fab__mcs_t *mcs, fab__mc_team_t *team)
{
    for (unsigned i = 0; i < FAB__MC_BINDS; i++) {
        if (team->binds[i])
            fab__mc_bind_free(team, i);
    }
    fab__map_remove(&mcs->teams, (uint64_t)team->ino);
    close(team->token_fd);
    free(team);
}

static void fab__mc_member_free(fab__mc_member_t *m)
{
    if (m->staging)
        munmap(m->staging, m->team->size);
    if (m->shadow)
        munmap(m->shadow, m->shadow_len);
    if (m->staging_holes >= 0)
        close(m->staging_holes);
    if (m->shadow_holes >= 0)
        close(m->shadow_holes);
    free(m);
}

/* A member leaves: its binds go, and the team with its last member. */
static void fab__mc_member_drop(fab__mcs_t *mcs, fab__mc_member_t *m, bool lost)
{
    fab__mc_team_t *team = m->team;
    for (unsigned i = 0; i < FAB__MC_BINDS; i++) {
        if (team->binds[i] && team->binds[i]->member == m)
            fab__mc_bind_free(team, i);
    }
    for (unsigned i = 0; i < team->nmembers; i++) {
        if (team->members[i] == m) {
            team->members[i] = team->members[--team->nmembers];
            break;
        }
    }
    fab__map_remove(&mcs->members, m->id);
    fab__mc_member_free(m);
    if (team->nmembers == 0) {
        fab__mc_team_free(mcs, team);
        return;
    }
    if (lost && team->ndevices < team->num_devices && !team->lost) {
        team->lost = true;
        fab__mc_publish(team);
    }
}

void fab__mcs_conn_close(fab__mcs_t *mcs, fab__conn_t *conn)
{
    if (!mcs)
        return;
    /* Collected first: dropping changes the tables being walked. */
    for (size_t i = 0; i < mcs->members.cap; i++) {
        fab__mc_member_t *m = mcs->members.slots[i].value;
        if (mcs->members.slots[i].key != 0 && m->conn == conn) {
            fab__mc_member_drop(mcs, m, true);
            i = (size_t)-1; /* the table may have shrunk: walk it again */
            if (mcs->members.cap == 0)
                break;
        }
    }
    for (size_t i = 0; i < mcs->teams.cap; i++) {
        fab__mc_team_t *t = mcs->teams.slots[i].value;
        if (mcs->teams.slots[i].key == 0)
            continue;
        if (t->creator == conn)
            t->creator = NULL;
        if (t->nmembers == 0 && t->creator == NULL) {
            fab__mc_team_free(mcs, t);
            i = (size_t)-1;
            if (mcs->teams.cap == 0)
                break;
        }
    }
}

void fab__mcs_destroy(fab__mcs_t *mcs)
{
    if (!mcs)
        return;
    while (mcs->members.count > 0) {
        for (size_t i = 0; i < mcs->members.cap; i++) {
            if (mcs->members.slots[i].key != 0) {
                fab__mc_member_drop(mcs, mcs->members.slots[i].value, false);
                break;
            }
        }
    }
    while (mcs->teams.count > 0) {
        for (size_t i = 0; i < mcs->teams.cap; i++) {
            if (mcs->teams.slots[i].key != 0) {
                fab__mc_team_free(mcs, mcs->teams.slots[i].value);
                break;
            }
        }
    }
    fab__map_free(&mcs->members);
    fab__map_free(&mcs->teams);
    free(mcs);
}

size_t fab__mcs_team_count(const fab__mcs_t *mcs)
{
    return mcs ? mcs->teams.count : 0;
}

/* How many teams conn made or joined, still live. */
static unsigned fab__mc_conn_load(const fab__mcs_t *mcs, const fab__conn_t *conn)
{
    unsigned n = 0;
    for (size_t i = 0; i < mcs->members.cap; i++) {
        const fab__mc_member_t *m = mcs->members.slots[i].value;
        n += mcs->members.slots[i].key != 0 && m->conn == conn;
    }
    for (size_t i = 0; i < mcs->teams.cap; i++) {
        const fab__mc_team_t *t = mcs->teams.slots[i].value;
        n += mcs->teams.slots[i].key != 0 && t->creator == conn && t->nmembers == 0;
    }
    return n;
}

static const fab__node_t *fab__mc_node(const fab__mcs_t *mcs, const fab__conn_t *conn)
{
    return &mcs->topology->nodes[conn->node];
}

/* ---- the requests ------------------------------------------------------------ */

static fab_status_t fab__mc_create(fab__mcs_t *mcs, fab__conn_t *conn, const fab__request_t *rq,
                                   int token_fd, fab__reply_fds_t *fds_out)
{
    const fab__node_t *node = fab__mc_node(mcs, conn);
    uint64_t gran = node->device.granularity;
    if (rq->u.mc.device < 0 || rq->u.mc.device >= node->info.device_count)
        return FAB_ERROR_INVALID_DEVICE;
    if (rq->u.mc.count == 0 || rq->u.mc.count > FAB__MC_DEVICES || rq->u.mc.size == 0 ||
        gran == 0 || rq->u.mc.mc_offset != gran || rq->u.mc.size % gran != 0 ||
        rq->u.mc.size > node->device.total_memory || rq->u.mc.types == 0 ||
        (rq->u.mc.types & ~FAB__MC_TYPES) != 0 || rq->u.mc.mem_offset != 0)
        return FAB_ERROR_INVALID_VALUE;
    if (rq->u.mc.size > FAB__MC_SIZE_MAX || fab__mc_conn_load(mcs, conn) >= FAB__MC_PER_CONN)
        return FAB_ERROR_OUT_OF_MEMORY;
    /* The token: the region named (a FABRIC team's, so that its handle
     * travels and is checked as any), or with id 0 a memfd of one granule
     * made here, handed out read-only (its bytes mean nothing: the token
     * is its inode). */
    int own = -1, out = -1;
    if (rq->u.mc.id == 0) {
        if (fab__memfd_create("fabmem-multicast-team", gran, &own) != FAB_SUCCESS)
            return FAB_ERROR_OUT_OF_MEMORY;
        out = fab__memfd_reopen_read_only(own);
        if (out < 0) {
            close(own);
            return FAB_ERROR_OUT_OF_MEMORY;
        }
    } else if (token_fd < 0) {
        return FAB_ERROR_INVALID_VALUE; /* not the sender's own, unshared, live region */
    } else if ((own = fcntl(token_fd, F_DUPFD_CLOEXEC, 0)) < 0) {
        return FAB_ERROR_OUT_OF_MEMORY;
    }
    struct stat st;
    fab__mc_team_t *team = NULL;
    fab_status_t status = FAB_ERROR_INVALID_VALUE;
    if (fstat(own, &st) != 0 || st.st_ino == 0 ||
        fab__map_get(&mcs->teams, (uint64_t)st.st_ino) != NULL)
        goto fail; /* a team already */
    status = FAB_ERROR_OUT_OF_MEMORY;
    team = calloc(1, sizeof(*team));
    if (!team)
        goto fail;
    team->token_fd = own;
    team->dev = st.st_dev;
    team->ino = st.st_ino;
    team->creator = conn;
    team->size = rq->u.mc.size;
    team->gran = gran;
    team->num_devices = rq->u.mc.count;
    team->handle_types = rq->u.mc.types;
    team->creator_node = conn->node;
    if (fab__map_put(&mcs->teams, (uint64_t)st.st_ino, team) != 0)
        goto fail;
    if (out >= 0) {
        fds_out->fd[0] = out;
        fds_out->count = 1;
        fds_out->owned = 1;
    }
    return FAB_SUCCESS;

fail:
    free(team);
    if (own >= 0)
        close(own);
    if (out >= 0)
        close(out);
    return status;
}

/* A memfd of len bytes, mapped read-write here: *fd_out and *map_out. */
static fab_status_t fab__mc_memfd(const char *name, size_t len, int *fd_out, uint8_t **map_out)
{
    int fd = -1;
    if (fab__memfd_create(name, len, &fd) != FAB_SUCCESS)
        return FAB_ERROR_OUT_OF_MEMORY;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        close(fd);
        return FAB_ERROR_OUT_OF_MEMORY;
    }
    *fd_out = fd;
    *map_out = p;
    return FAB_SUCCESS;
}

static fab_status_t fab__mc_join(fab__mcs_t *mcs, fab__conn_t *conn, int fd, fab__reply_t *reply,
                                 fab__reply_fds_t *fds_out)
{
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        return fd == FAB__FD_LOST ? FAB_ERROR_OUT_OF_MEMORY : FAB_ERROR_INVALID_VALUE;
    fab__mc_team_t *team = fab__map_get(&mcs->teams, (uint64_t)st.st_ino);
    if (team == NULL || team->dev != st.st_dev)
        return FAB_ERROR_NOT_FOUND; /* ordinary memory: the daemon knows no team by it */
    if (team->nmembers >= FAB__MC_MEMBERS || fab__mc_conn_load(mcs, conn) >= FAB__MC_PER_CONN)
        return FAB_ERROR_OUT_OF_MEMORY;
    fab__mc_member_t *m = calloc(1, sizeof(*m));
    if (!m)
        return FAB_ERROR_OUT_OF_MEMORY;
    m->team = team;
    m->conn = conn;
    m->staging_holes = m->shadow_holes = -1;
    m->shadow_len = FAB__MC_PAGE + 2 * team->size;
    int staging_fd = -1, shadow_fd = -1, shadow_ro = -1;
    fab_status_t status = fab__mc_memfd("fabmem-multicast", team->size, &staging_fd, &m->staging);
    if (status != FAB_SUCCESS)
        goto fail;
    status = fab__mc_memfd("fabmem-multicast-shadow", m->shadow_len, &shadow_fd, &m->shadow);
    if (status != FAB_SUCCESS)
        goto fail;
    shadow_ro = fab__memfd_reopen_read_only(shadow_fd);
    /* Descriptors of the daemon's own for the holes: the member's share its
     * file offset. Without them every byte counts as written. */
    m->staging_holes = fab__memfd_reopen_read_only(staging_fd);
    m->shadow_holes = fab__memfd_reopen_read_only(shadow_fd);
    close(shadow_fd);
    shadow_fd = -1;
    status = FAB_ERROR_OUT_OF_MEMORY;
    if (shadow_ro < 0)
        goto fail;
    do
        randombytes_buf(&m->id, sizeof(m->id));
    while (m->id == 0 || fab__map_get(&mcs->members, m->id) != NULL);
    if (fab__map_put(&mcs->members, m->id, m) != 0)
        goto fail;
    team->members[team->nmembers++] = m;
    fab__mc_publish(team);
    reply->u.mc.id = m->id;
    reply->u.mc.size = team->size;
    reply->u.mc.granularity = team->gran;
    reply->u.mc.num_devices = team->num_devices;
    reply->u.mc.handle_types = team->handle_types;
    reply->u.mc.creator_node = team->creator_node;
    reply->u.mc.shadow_pages = 1;
    fds_out->fd[0] = staging_fd;
    fds_out->fd[1] = shadow_ro;
    fds_out->count = 2;
    fds_out->owned = 3;
    return FAB_SUCCESS;

fail:
    if (staging_fd >= 0)
        close(staging_fd);
    if (shadow_fd >= 0)
        close(shadow_fd);
    if (shadow_ro >= 0)
        close(shadow_ro);
    fab__mc_member_free(m);
    return status;
}

/* The sender's member that id names, or NULL. */
static fab__mc_member_t *fab__mc_member(fab__mcs_t *mcs, const fab__conn_t *conn, uint64_t id)
{
    fab__mc_member_t *m = id ? fab__map_get(&mcs->members, id) : NULL;
    return m && m->conn == conn ? m : NULL;
}

static fab_status_t fab__mc_add(fab__mcs_t *mcs, fab__mc_member_t *m, const fab__request_t *rq)
{
    fab__mc_team_t *team = m->team;
    const fab__node_t *node = fab__mc_node(mcs, m->conn);
    int32_t dev = rq->u.mc.device;
    if (dev < 0 || dev >= node->info.device_count)
        return FAB_ERROR_INVALID_DEVICE;
    /* The team is one NVLink domain: the creator's node and this one must
     * reach each other (the rule of fabric imports). */
    if (team->creator_node != m->conn->node &&
        fab_topology_path(mcs->topology, team->creator_node, m->conn->node) != FAB_SUCCESS)
        return FAB_ERROR_NOT_SUPPORTED;
    for (uint32_t i = 0; i < team->ndevices; i++) {
        if (team->devices[i].node == m->conn->node && team->devices[i].device == dev)
            return FAB_ERROR_INVALID_VALUE; /* a member already */
    }
    if (team->ndevices >= team->num_devices || team->binds_ever > 0)
        return FAB_ERROR_INVALID_VALUE; /* complete, or closed by a bind */
    team->devices[team->ndevices].node = m->conn->node;
    team->devices[team->ndevices].device = dev;
    team->ndevices++;
    fab__mc_publish(team);
    return FAB_SUCCESS;
}

/* Whether [off, +len) lies in a team of size bytes, in whole granules. */
static bool fab__mc_range_ok(const fab__mc_team_t *team, uint64_t off, uint64_t len)
{
    return len != 0 && len % team->gran == 0 && off % team->gran == 0 && len <= team->size &&
           off <= team->size - len;
}

/* A new bind's memory into the member's staging copy and snapshot: its data
 * copied, its holes made holes there (what the member's copy held before
 * goes, as a copy of zeros would take it, without allocating them). */
static void fab__mc_copy_in(const fab__mc_bind_t *b, uint8_t *staging, uint8_t *snap)
{
    uint64_t at = 0, base = b->mem_offset, len = b->size;
    while (at < len) {
        uint64_t d = fab__memfd_data_from(b->holes, base + at, base + len) - base;
        if (d > at) {
            fab__memfd_zero_mapped(staging + at, d - at);
            fab__memfd_zero_mapped(snap + at, d - at);
        }
        if (d >= len)
            break;
        uint64_t h = fab__memfd_hole_from(b->holes, base + d, base + len) - base;
        if (h <= d)
            h = len; /* the kernel could not say: copy the rest */
        memcpy(staging + d, b->map + d, h - d);
        memcpy(snap + d, b->map + d, h - d);
        at = h;
    }
}

static fab_status_t fab__mc_bind(fab__mcs_t *mcs, fab__mc_member_t *m, const fab__request_t *rq,
                                 int fd, fab__reply_t *reply)
{
    (void)mcs;
    fab__mc_team_t *team = m->team;
    uint64_t off = rq->u.mc.mc_offset, mem_off = rq->u.mc.mem_offset, size = rq->u.mc.size;
    if (fd < 0)
        return fd == FAB__FD_LOST ? FAB_ERROR_OUT_OF_MEMORY : FAB_ERROR_INVALID_VALUE;
    if (team->ndevices < team->num_devices)
        return FAB_ERROR_ILLEGAL_STATE; /* the member waits for the team first */
    if (!fab__mc_range_ok(team, off, size) || mem_off % team->gran != 0)
        return FAB_ERROR_INVALID_VALUE;
    bool member = false;
    for (uint32_t i = 0; i < team->ndevices; i++)
        member = member || (team->devices[i].node == m->conn->node &&
                            team->devices[i].device == rq->u.mc.device);
    if (!member)
        return FAB_ERROR_INVALID_DEVICE;
    /* The memory: a sealed memfd that this member may write, long enough.
     * The seals keep it from shrinking under the mapping made here. */
    struct stat st;
    char why[160];
    if (fstat(fd, &st) != 0 || st.st_size <= 0 || mem_off > (uint64_t)st.st_size ||
        size > (uint64_t)st.st_size - mem_off ||
        fab__memfd_check(fd, (uint64_t)st.st_size, 1, why, sizeof(why)) != FAB_SUCCESS)
        return FAB_ERROR_INVALID_VALUE;
    int free_slot = -1;
    for (int i = 0; i < FAB__MC_BINDS; i++) {
        const fab__mc_bind_t *b = team->binds[i];
        if (!b) {
            if (free_slot < 0)
                free_slot = i;
            continue;
        }
        if (b->node == m->conn->node && b->device == rq->u.mc.device && b->mc_offset < off + size &&
            off < b->mc_offset + b->size)
            return FAB_ERROR_INVALID_VALUE; /* that device has memory there */
    }
    if (free_slot < 0)
        return FAB_ERROR_OUT_OF_MEMORY;
    fab__mc_bind_t *b = calloc(1, sizeof(*b));
    if (!b)
        return FAB_ERROR_OUT_OF_MEMORY;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)mem_off);
    if (p == MAP_FAILED) {
        free(b);
        return FAB_ERROR_OUT_OF_MEMORY;
    }
    b->member = m;
    randombytes_buf(&b->id, sizeof(b->id));
    b->node = m->conn->node;
    b->device = rq->u.mc.device;
    b->mc_offset = off;
    b->size = size;
    b->map = p;
    b->mem_offset = mem_off;
    b->holes = fab__memfd_reopen_read_only(fd);
    team->binds[free_slot] = b;
    team->binds_ever++;
    /* The member's multicast mapping reads its own copy from now on: what
     * the memory holds is copied, what it never had is zeros. */
    fab__mc_copy_in(b, m->staging + off, fab__mc_snapshot(m) + off);
    fab__mc_publish(team);
    reply->u.mc.id = b->id;
    return FAB_SUCCESS;
}

static fab_status_t fab__mc_unbind(fab__mc_member_t *m, const fab__request_t *rq)
{
    fab__mc_team_t *team = m->team;
    for (unsigned i = 0; i < FAB__MC_BINDS; i++) {
        const fab__mc_bind_t *b = team->binds[i];
        if (b && b->member == m && b->device == rq->u.mc.device &&
            b->mc_offset == rq->u.mc.mc_offset && b->size == rq->u.mc.size) {
            fab__mc_bind_free(team, i);
            return FAB_SUCCESS;
        }
    }
    return FAB_ERROR_INVALID_VALUE;
}

void fab__mc_push(const fab__mc_team_t *team, const uint8_t *staging, uint64_t off,
                  uint64_t len)
{
    for (unsigned i = 0; i < FAB__MC_BINDS; i++) {
        const fab__mc_bind_t *b = team->binds[i];
        uint64_t lo, hi;
        if (!fab__mc_overlap(b, off, len, &lo, &hi))
            continue;
        memcpy(b->map + (lo - b->mc_offset), staging + lo, hi - lo);
    }
}

/* A ranged MC_SYNC without an operation (multimem.st): the member's staging
 * bytes [mc_offset, +size) go to every bind that covers them, whatever the
 * snapshot holds (a peer may have written its own copy since), and the
 * snapshot takes them, so that the next full synchronisation does not send
 * them again. Any range in the team, to the byte; the fields it does not
 * name must be zero. */
static fab_status_t fab__mc_publish_range(fab__mc_member_t *m, const fab__request_t *rq)
{
    const fab__mc_team_t *team = m->team;
    uint64_t off = rq->u.mc.mc_offset, len = rq->u.mc.size;
    if (rq->u.mc.count != 0 || rq->u.mc.mem_offset != 0 || len > team->size ||
        off > team->size - len) {
        fab__user_log(m->conn->user, FAB__LOG_WARN, "MC_SYNC refused: the range [%llu, +%llu) lies outside the "
                 "team's %llu bytes, or names fields a store does not have",
                 (unsigned long long)off, (unsigned long long)len,
                 (unsigned long long)team->size);
        return FAB_ERROR_INVALID_VALUE;
    }
    fab__mc_push(team, m->staging, off, len);
    memcpy(fab__mc_snapshot(m) + off, m->staging + off, len);
    return FAB_SUCCESS;
}

/* The member's staging pages [lo, hi) that differ from its snapshot: the
 * bytes that differ go to every bind, a page compared before any is
 * written; then the snapshot takes the page. */
static void fab__mc_send_changes(fab__mc_member_t *m, uint64_t lo, uint64_t hi)
{
    uint8_t *staging = m->staging, *snap = fab__mc_snapshot(m);
    for (uint64_t at = lo; at < hi; at += FAB__MC_PAGE) {
        uint64_t n = hi - at < FAB__MC_PAGE ? hi - at : FAB__MC_PAGE;
        if (memcmp(staging + at, snap + at, n) == 0)
            continue;
        uint64_t i = 0;
        while (i < n) {
            if (staging[at + i] == snap[at + i]) {
                i++;
                continue;
            }
            uint64_t j = i;
            while (j < n && staging[at + j] != snap[at + j])
                j++;
            fab__mc_push(m->team, staging, at + i, j - i);
            i = j;
        }
        memcpy(snap + at, staging + at, n);
    }
}

/* The member's own bound memory [lo, hi) of bind b into its staging copy
 * and snapshot, where it differs. */
static void fab__mc_take_bind(fab__mc_member_t *m, const fab__mc_bind_t *b, uint64_t lo,
                              uint64_t hi)
{
    uint8_t *staging = m->staging + b->mc_offset, *snap = fab__mc_snapshot(m) + b->mc_offset;
    for (uint64_t at = lo; at < hi; at += FAB__MC_PAGE) {
        uint64_t n = hi - at < FAB__MC_PAGE ? hi - at : FAB__MC_PAGE;
        if (memcmp(staging + at, b->map + at, n) != 0) {
            memcpy(staging + at, b->map + at, n);
            memcpy(snap + at, b->map + at, n);
        }
    }
}

/* What a synchronisation point did in the member process before: the
 * staging bytes that differ from the snapshot go to every bind; then the
 * staging copy and snapshot are refreshed from the member's own bound
 * memory. Only what either side of a comparison ever held is compared
 * (fab__memfd_written): a team of hundreds of MiB that a kernel wrote a page of
 * costs a page, and no page that was never written is allocated. With a
 * size, only that range, written at once (fab__mc_publish_range), or with
 * an operation folded in (fab__mc_red). */
static fab_status_t fab__mc_sync(fab__mc_member_t *m, const fab__request_t *rq)
{
    if (rq->u.mc.types != 0)
        return fab__mc_red(m, rq);
    if (rq->u.mc.size != 0)
        return fab__mc_publish_range(m, rq);
    fab__mc_team_t *team = m->team;
    uint64_t lo, hi;
    for (uint64_t from = 0; fab__memfd_written(m->staging_holes, 0, m->shadow_holes, FAB__MC_PAGE,
                                              from, team->size, FAB__MC_PAGE, &lo, &hi);
         from = hi)
        fab__mc_send_changes(m, lo, hi);
    for (unsigned k = 0; k < FAB__MC_BINDS; k++) {
        const fab__mc_bind_t *b = team->binds[k];
        if (!b || b->member != m)
            continue;
        for (uint64_t from = 0; fab__memfd_written(b->holes, b->mem_offset, m->staging_holes,
                                                  b->mc_offset, from, b->size, FAB__MC_PAGE, &lo,
                                                  &hi);
             from = hi)
            fab__mc_take_bind(m, b, lo, hi);
    }
    return FAB_SUCCESS;
}

fab_status_t fab__mcs_answer(fab__mcs_t *mcs, fab__conn_t *conn, const fab__request_t *request,
                             int *fd_in, int token_fd, fab__reply_t *reply,
                             fab__reply_fds_t *fds_out)
{
    int fd = *fd_in;
    *fd_in = -1;
    fab_status_t status = FAB_ERROR_INVALID_VALUE;
    if (mcs == NULL) {
        status = FAB_ERROR_OUT_OF_MEMORY;
    } else if (request->type == FAB__MSG_MC_CREATE) {
        status = fab__mc_create(mcs, conn, request, token_fd, fds_out);
    } else if (request->type == FAB__MSG_MC_JOIN) {
        status = fab__mc_join(mcs, conn, fd, reply, fds_out);
    } else {
        fab__mc_member_t *m = fab__mc_member(mcs, conn, request->u.mc.id);
        if (m == NULL) {
            status = FAB_ERROR_INVALID_VALUE; /* no member of the sender's */
        } else {
            switch (request->type) {
            case FAB__MSG_MC_ADD:
                status = fab__mc_add(mcs, m, request);
                break;
            case FAB__MSG_MC_BIND:
                status = fab__mc_bind(mcs, m, request, fd, reply);
                break;
            case FAB__MSG_MC_UNBIND:
                status = fab__mc_unbind(m, request);
                break;
            case FAB__MSG_MC_SYNC:
                status = fab__mc_sync(m, request);
                break;
            case FAB__MSG_MC_REDUCE:
                status = fab__mc_reduce(m, request);
                break;
            case FAB__MSG_MC_LEAVE:
                fab__mc_member_drop(mcs, m, false);
                status = FAB_SUCCESS;
                break;
            default:
                break;
            }
        }
    }
    if (fd >= 0)
        close(fd); /* nothing keeps it: a bind keeps its mapping */
    return status;
}
