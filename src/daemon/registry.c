/* The daemon's registry and rules (see registry.h). Every question of rule is
 * put to the model (fab_memory_*, fab_importer_*); the registry adds what the
 * model has no notion of: real memory (a memfd per allocation), who holds a
 * reference, IMEX channels, topology, and the keyed tag that makes a handle
 * unforgeable.
 *
 * Order of checks on IMPORT, so that each failure reports what the driver
 * would: hello, device (INVALID_DEVICE); handle bytes, origin, tag, IMEX
 * domain, liveness (INVALID_HANDLE); channel (NOT_PERMITTED); reachability
 * and grant, by the model (NOT_SUPPORTED, NOT_PERMITTED). IMPORT_MANY puts
 * each of its handles through the same function (fab__import), in order.
 *
 * Objects and their lifetimes:
 *   user   one per uid with a connection or a live allocation; counters only
 *   conn   HELLO .. disconnection; owns its refs
 *   ref    ALLOC / IMPORT / ADOPT .. RELEASE or disconnection; one count on
 *          its alloc; {alloc, creator} plus, while parked, the memory its
 *          holder showed
 *   alloc  first ref .. last ref; live (memfd) or pending (parked importers
 *          only, waiting for the creator); the last ref of a live one closes
 *          the memfd and leaves a tombstone
 *   team   multicast teams and their members and binds: teams.c's, which
 *          this file hands the MC_* requests and each closing connection */
#include "src/daemon/registry.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/base/le.h"
#include "src/common/log.h"
#include "src/common/memfd.h"
#include "src/common/topology_impl.h"
#include "src/daemon/fieldfaults.h"
#include "src/daemon/teams.h"

typedef struct fab__ref fab__ref_t;

typedef struct fab__alloc {
    fab_memory_t *memory; /* the model's object: uuid, props, export count */
    uint64_t channels;    /* the creator's channels (0 while pending) */
    uint64_t key;         /* its key in daemon->allocs */
    int fd;               /* the memfd; -1 while pending */
    int node;             /* the creator's node */
    uint32_t refs;
    fab__user_t *owner;   /* charged for it while live */
    fab__ref_t *parked;   /* importers waiting for the creator (pending only) */
    bool mc_token;        /* a multicast team was made of it (MC_CREATE) */
} fab__alloc_t;

/* A live allocation's handle: minted as it went live and kept by its model
 * object (fab_memory_handle), so that an IMPORT compares 64 bytes instead of
 * computing a tag. */
static const fab_handle_t *fab__alloc_handle(const fab__alloc_t *alloc)
{
    return fab_memory_handle(alloc->memory);
}

struct fab__ref {
    fab__alloc_t *alloc;
    fab__conn_t *conn;
    uint64_t id;
    bool creator;
    bool parked;
    dev_t dev; /* parked: the memory the importer holds */
    ino_t ino;
    fab__ref_t *next_parked;
};

/* A published IPC handle: the memfd, what it holds, who published it. */
typedef struct fab__ipc {
    uint64_t id;       /* its key in daemon->ipcs and in its publisher's map */
    fab__conn_t *conn; /* the publisher */
    int fd;
    uint8_t kind;
    int32_t device;
    uint64_t size;
} fab__ipc_t;

struct fab__user {
    uid_t uid;
    uint64_t connections;
    uint64_t allocations;
    uint64_t bytes;
    uint64_t references;
    uint64_t ipcs;          /* IPC entries its connections published */
    uint64_t fds_in_flight; /* fds sent to it not read yet (main.c counts them) */
    /* Every log line one of its peers can trigger is limited per uid and
     * per kind of line (its format, hashed into FAB__USER_LOG_SLOTS
     * limiters): a refusal over a [daemon] limit once a second, any other
     * warning or error FAB__USER_LOG_WARN_PER_SECOND a second, an info or
     * debug line FAB__USER_LOG_INFO_PER_SECOND; then a count of the rest.
     * A user that logged is kept (logged), so that reconnecting starts no
     * fresh budget: one record per uid that ever logged. */
    fab__log_limit_t log_limit;
    fab__log_limit_t logs[8];
    bool logged;
};

#define FAB__USER_LOG_SLOTS 8
#define FAB__USER_LOG_WARN_PER_SECOND 5
#define FAB__USER_LOG_INFO_PER_SECOND 100

/* One line a peer of user triggered, under the uid's budget for its kind. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 0)))
#endif
static void fab__user_vlog(fab__user_t *user, fab__log_level_t level, const char *fmt, va_list ap)
{
    if (!fab__log_enabled(level))
        return;
    user->logged = true;
    uintptr_t h = (uintptr_t)fmt;
    fab__log_limit_t *limit = &user->logs[(h ^ (h >> 4) ^ (h >> 9)) % FAB__USER_LOG_SLOTS];
    fab__log_rate_v(limit, level <= FAB__LOG_WARN ? FAB__USER_LOG_WARN_PER_SECOND
                                                  : FAB__USER_LOG_INFO_PER_SECOND,
                    level, fmt, ap);
}

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4)))
#endif
static void fab__user_log(fab__user_t *user, fab__log_level_t level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fab__user_vlog(user, level, fmt, ap);
    va_end(ap);
}

/* A refusal over a [daemon] limit: once a second per uid. */
#define fab__user_log_refusal(user, ...)                                                 \
    do {                                                                                 \
        fab__user_t *user_ = (user);                                                     \
        user_->logged = true;                                                            \
        fab__log_limited(&user_->log_limit, FAB__LOG_WARN, __VA_ARGS__);                 \
    } while (0)

struct fab__registry {
    const fab_topology_t *topology;
    uint8_t key[FAB__KEY_BYTES];
    uid_t uid;            /* the daemon's own: sees global STATS */
    uint64_t *domain_ids; /* per node: id of its IMEX domain */
    uint64_t *used;       /* per node and device: bytes allocated */
    int *device_base;     /* per node: its first entry in used */
    fab__map_t allocs;    /* uuid word -> fab__alloc_t */
    fab__map_t users;     /* uid + 1 -> fab__user_t */
    fab__set_t tombstones; /* uuid words of freed allocations adopted from an earlier daemon */
    uint32_t epoch;        /* in bytes 8..11 of every uuid this daemon mints */
    fab__map_t ipcs;       /* IPC handle id -> fab__ipc_t, all publishers' */
    size_t nconns;
    uint64_t bytes;
    fab__faults_t *faults; /* field faults: IMEX, isolation, withdrawn channels */
    fab__mcs_t *mcs;       /* multicast teams (multicast.h) */
};

static uint64_t fab__uuid_key(const fab_uuid_t *uuid)
{
    return fab__le_get64(uuid->bytes);
}

/* Whether this daemon minted uuid: its epoch in bytes 8..11. One that did
 * and that it does not hold live was freed (an authentic handle carries a
 * uuid this key minted; another daemon of this key picked another epoch,
 * but for a chance of 2^-32 per restart). So an allocation this daemon
 * made needs no tombstone: only those adopted from an earlier daemon do. */
static bool fab__uuid_ours(const fab__registry_t *daemon, const fab_uuid_t *uuid)
{
    return fab__le_get32(uuid->bytes + 8) == daemon->epoch;
}

/* The tag: keyed BLAKE2b over the bytes it covers, cut to 16 bytes. */
static void fab__handle_tag(const fab__registry_t *daemon, const uint8_t *bytes,
                            uint8_t tag[FAB_HANDLE_TAG_BYTES])
{
    crypto_generichash(tag, FAB_HANDLE_TAG_BYTES, bytes, FAB_HANDLE_TAG_OFFSET, daemon->key,
                       sizeof(daemon->key));
}

/* The creator token: keyed BLAKE2b over a label and the uuid. Only the ALLOC
 * reply carries it, so holding it proves having made the allocation; the
 * label keeps it from ever equalling a tag. */
static void fab__creator_token(const fab__registry_t *daemon, const fab_uuid_t *uuid,
                               uint8_t token[FAB__TOKEN_BYTES])
{
    uint8_t in[8 + 16] = {'c', 'r', 'e', 'a', 't', 'o', 'r', 0};
    memcpy(in + 8, uuid->bytes, 16);
    crypto_generichash(token, FAB__TOKEN_BYTES, in, sizeof(in), daemon->key, sizeof(daemon->key));
}

fab__registry_t *fab__registry_create(const fab_topology_t *topology, const uint8_t key[FAB__KEY_BYTES])
{
    if (sodium_init() < 0)
        return NULL;
    fab__registry_t *daemon = calloc(1, sizeof(*daemon));
    if (daemon == NULL)
        return NULL;
    daemon->topology = topology;
    daemon->uid = geteuid();
    memcpy(daemon->key, key, FAB__KEY_BYTES);
    do
        randombytes_buf(&daemon->epoch, sizeof(daemon->epoch));
    while (daemon->epoch == 0);
    int n = topology->nnodes, total = 0;
    daemon->domain_ids = calloc((size_t)n, sizeof(*daemon->domain_ids));
    daemon->device_base = calloc((size_t)n, sizeof(*daemon->device_base));
    for (int i = 0; i < n; i++)
        total += fab__topology_slot_count(topology, i);
    daemon->used = calloc((size_t)total + 1, sizeof(*daemon->used));
    /* The topology is the daemon's own (main.c loaded it for the registry
     * alone): field faults are written into it, so that every rule and
     * every TOPOLOGY reply sees them (fieldfaults.h). */
    daemon->faults = fab__faults_create((fab_topology_t *)topology);
    daemon->mcs = fab__mcs_create(topology);
    if (daemon->domain_ids == NULL || daemon->device_base == NULL || daemon->used == NULL ||
        daemon->faults == NULL || daemon->mcs == NULL) {
        fab__registry_destroy(daemon);
        return NULL;
    }
    total = 0;
    for (int i = 0; i < n; i++) {
        /* A domain's id is keyed too: another daemon names the same domain
         * differently, so its handles read as minted elsewhere. */
        const char *name = topology->nodes[i].info.imex_domain;
        uint8_t id[8];
        crypto_generichash(id, sizeof(id), (const uint8_t *)name, strlen(name), key,
                           FAB__KEY_BYTES);
        uint64_t v = fab__le_get64(id);
        daemon->domain_ids[i] = v ? v : 1;
        daemon->device_base[i] = total;
        total += fab__topology_slot_count(topology, i);
    }
    return daemon;
}

/* ---- users ------------------------------------------------------------------ */

static fab__user_t *fab__user_get(fab__registry_t *daemon, uid_t uid)
{
    uint64_t key = (uint64_t)uid + 1;
    fab__user_t *user = fab__map_get(&daemon->users, key);
    if (user != NULL)
        return user;
    user = calloc(1, sizeof(*user));
    if (user == NULL)
        return NULL;
    user->uid = uid;
    if (fab__map_put(&daemon->users, key, user) != 0) {
        free(user);
        return NULL;
    }
    return user;
}

/* Forget a user that holds nothing any more. */
static void fab__user_put(fab__registry_t *daemon, fab__user_t *user)
{
    if (user->connections != 0 || user->allocations != 0 || user->references != 0 ||
        user->logged)
        return;
    fab__map_remove(&daemon->users, (uint64_t)user->uid + 1);
    free(user);
}

/* ---- allocations and references ------------------------------------------------ */

static bool fab__alloc_live(const fab__alloc_t *alloc)
{
    return alloc->fd >= 0;
}

/* The bytes in use on one place of node's memory: a GPU, or a host NUMA node
 * (device FAB_HOST_NUMA_ORDINAL_BASE + n), each counted on its own. device is
 * one the topology knows (fab__topology_alloc_check said so). */
static uint64_t *fab__device_used(fab__registry_t *daemon, int node, int device)
{
    return &daemon->used[daemon->device_base[node] +
                         fab__topology_slot(daemon->topology, node, device)];
}

static void fab__alloc_free(fab__registry_t *daemon, fab__alloc_t *alloc)
{
    fab__map_remove(&daemon->allocs, alloc->key);
    if (fab__alloc_live(alloc)) {
        fab_alloc_props_t props = fab_memory_props(alloc->memory);
        *fab__device_used(daemon, alloc->node, props.device_ordinal) -= props.size;
        daemon->bytes -= props.size;
        alloc->owner->allocations--;
        alloc->owner->bytes -= props.size;
        fab__user_put(daemon, alloc->owner);
        close(alloc->fd);
    }
    fab_memory_destroy(alloc->memory);
    free(alloc);
}

static void fab__alloc_unref(fab__registry_t *daemon, fab__alloc_t *alloc)
{
    if (--alloc->refs != 0)
        return;
    char hex[33];
    fab_uuid_t uuid = fab_memory_uuid(alloc->memory);
    fab__uuid_hex(&uuid, hex);
    /* A pending allocation was never brought back: its creator may still
     * come, so it leaves no tombstone. */
    if (fab__alloc_live(alloc) && !fab__uuid_ours(daemon, &uuid) &&
        fab__set_add(&daemon->tombstones, alloc->key) != 0)
        fab__log(FAB__LOG_WARN, "allocation %s: no memory to remember it was freed", hex);
    if (alloc->owner != NULL)
        fab__user_log(alloc->owner, FAB__LOG_DEBUG, "allocation %s freed", hex);
    fab__alloc_free(daemon, alloc);
}

/* A reference for conn on alloc; OUT_OF_MEMORY (logged) when conn's uid
 * holds max_references_per_uid already: each costs the daemon memory (a
 * record and a map slot), so the count bounds what one uid's references
 * can take, whatever it imports (IMPORT_MANY of its own handle, say). */
static fab_status_t fab__ref_add(fab__registry_t *daemon, fab__conn_t *conn, fab__alloc_t *alloc,
                                 bool creator, fab__ref_t **ref_out)
{
    uint64_t max = daemon->topology->limits.references;
    if (max != 0 && conn->user->references >= max) {
        fab__user_log_refusal(conn->user,
                      "uid %lu (pid %ld) refused a reference: it holds %llu, "
                      "max_references_per_uid is %llu", (unsigned long)conn->uid, (long)conn->pid,
                      (unsigned long long)conn->user->references, (unsigned long long)max);
        return FAB_ERROR_OUT_OF_MEMORY;
    }
    fab__ref_t *ref = conn->spare_refs;
    if (ref != NULL) {
        conn->spare_refs = ref->next_parked;
        memset(ref, 0, sizeof(*ref));
    } else {
        ref = calloc(1, sizeof(*ref));
        if (ref == NULL)
            return FAB_ERROR_OUT_OF_MEMORY;
    }
    ref->alloc = alloc;
    ref->conn = conn;
    ref->id = conn->next_ref++;
    ref->creator = creator;
    if (fab__map_put(&conn->refs, ref->id, ref) != 0) {
        ref->next_parked = conn->spare_refs;
        conn->spare_refs = ref;
        return FAB_ERROR_OUT_OF_MEMORY;
    }
    alloc->refs++;
    conn->user->references++;
    *ref_out = ref;
    return FAB_SUCCESS;
}

static void fab__parked_unlink(fab__ref_t *ref)
{
    for (fab__ref_t **p = &ref->alloc->parked; *p != NULL; p = &(*p)->next_parked) {
        if (*p == ref) {
            *p = ref->next_parked;
            break;
        }
    }
}

/* Drop one reference: out of its connection's map, off its allocation. */
static void fab__ref_drop(fab__registry_t *daemon, fab__ref_t *ref)
{
    fab__conn_t *conn = ref->conn;
    fab__map_remove(&conn->refs, ref->id);
    if (ref->parked)
        fab__parked_unlink(ref);
    conn->user->references--;
    fab__alloc_unref(daemon, ref->alloc);
    /* Kept for the connection's next reference, up to as many as it ever
     * held at once (a spare is linked through next_parked). */
    ref->next_parked = conn->spare_refs;
    conn->spare_refs = ref;
}

/* ---- IPC entries -------------------------------------------------------------------- */

static void fab__ipc_drop(fab__registry_t *daemon, fab__ipc_t *ipc)
{
    ipc->conn->user->ipcs--;
    fab__map_remove(&daemon->ipcs, ipc->id);
    fab__map_remove(&ipc->conn->ipcs, ipc->id);
    close(ipc->fd);
    free(ipc);
}

/* A connection leaves: everything it published is withdrawn, as its
 * process's cuMemFree would have done; pages others mapped stay theirs. */
static void fab__ipc_drop_all(fab__registry_t *daemon, fab__conn_t *conn)
{
    size_t n = conn->ipcs.count;
    while (conn->ipcs.count != 0) {
        for (size_t i = 0; i < conn->ipcs.cap; i++) {
            if (conn->ipcs.slots[i].key != 0) {
                fab__ipc_drop(daemon, conn->ipcs.slots[i].value);
                break;
            }
        }
    }
    fab__map_free(&conn->ipcs);
    if (n != 0)
        fab__user_log(conn->user, FAB__LOG_INFO, "client pid %ld left with %zu IPC handles: withdrawn",
                 (long)conn->pid, n);
}

/* ---- connections ------------------------------------------------------------------ */

fab__conn_t *fab__registry_conn_open(fab__registry_t *daemon, uid_t uid, gid_t gid, pid_t pid)
{
    fab__user_t *user = fab__user_get(daemon, uid);
    if (user == NULL)
        return NULL;
    uint64_t max = daemon->topology->limits.connections;
    if (max != 0 && user->connections >= max) {
        fab__user_log_refusal(user,
                         "uid %lu (pid %ld) refused: it holds %llu connections, "
                         "max_connections_per_uid is %llu", (unsigned long)uid, (long)pid,
                         (unsigned long long)user->connections, (unsigned long long)max);
        fab__user_put(daemon, user);
        return NULL;
    }
    fab__conn_t *conn = calloc(1, sizeof(*conn));
    if (conn == NULL) {
        fab__user_put(daemon, user);
        return NULL;
    }
    conn->user = user;
    conn->uid = uid;
    conn->gid = gid;
    conn->pid = pid;
    conn->node = -1;
    conn->next_ref = 1;
    conn->refs.keep = 1;
    user->connections++;
    daemon->nconns++;
    return conn;
}

void fab__registry_conn_reset(fab__registry_t *daemon, fab__conn_t *conn)
{
    while (conn->refs.count != 0) {
        for (size_t i = 0; i < conn->refs.cap; i++) {
            if (conn->refs.slots[i].key != 0) {
                fab__ref_drop(daemon, conn->refs.slots[i].value);
                break;
            }
        }
    }
    fab__ipc_drop_all(daemon, conn);
}

uint64_t *fab__registry_conn_fds_in_flight(fab__conn_t *conn)
{
    return &conn->user->fds_in_flight;
}

uint64_t fab__registry_fds_in_flight_limit(const fab__registry_t *daemon)
{
    return daemon->topology->limits.fds_in_flight;
}

void fab__registry_conn_close(fab__registry_t *daemon, fab__conn_t *conn)
{
    if (conn == NULL)
        return;
    fab__mcs_conn_close(daemon->mcs, conn);
    /* Dropping shrinks the map under us: take the first entry each time. */
    while (conn->refs.count != 0) {
        for (size_t i = 0; i < conn->refs.cap; i++) {
            if (conn->refs.slots[i].key != 0) {
                fab__ref_drop(daemon, conn->refs.slots[i].value);
                break;
            }
        }
    }
    fab__map_free(&conn->refs);
    while (conn->spare_refs != NULL) {
        fab__ref_t *next = conn->spare_refs->next_parked;
        free(conn->spare_refs);
        conn->spare_refs = next;
    }
    fab_importer_destroy(conn->importer);
    fab__ipc_drop_all(daemon, conn);
    daemon->nconns--;
    conn->user->connections--;
    fab__user_put(daemon, conn->user);
    free(conn);
}

void fab__registry_destroy(fab__registry_t *daemon)
{
    if (daemon == NULL)
        return;
    /* Connections are closed by their owner first; what is left here is
     * only possible if it did not, so free what remains. */
    for (size_t i = 0; i < daemon->allocs.cap; i++) {
        fab__alloc_t *alloc = daemon->allocs.slots[i].value;
        if (daemon->allocs.slots[i].key != 0) {
            if (alloc->fd >= 0)
                close(alloc->fd);
            fab_memory_destroy(alloc->memory);
            free(alloc);
        }
    }
    fab__map_free(&daemon->allocs);
    for (size_t i = 0; i < daemon->users.cap; i++) {
        if (daemon->users.slots[i].key != 0)
            free(daemon->users.slots[i].value);
    }
    fab__map_free(&daemon->users);
    for (size_t i = 0; i < daemon->ipcs.cap; i++) {
        fab__ipc_t *ipc = daemon->ipcs.slots[i].value;
        if (daemon->ipcs.slots[i].key != 0) {
            close(ipc->fd);
            free(ipc);
        }
    }
    fab__map_free(&daemon->ipcs);
    fab__set_free(&daemon->tombstones);
    sodium_memzero(daemon->key, sizeof(daemon->key));
    free(daemon->domain_ids);
    free(daemon->used);
    free(daemon->device_base);
    fab__faults_destroy(daemon->faults);
    fab__mcs_destroy(daemon->mcs);
    free(daemon);
}

size_t fab__registry_conn_count(const fab__registry_t *daemon)
{
    return daemon->nconns;
}

size_t fab__registry_alloc_count(const fab__registry_t *daemon)
{
    return daemon->allocs.count;
}

void fab__registry_conn_log(fab__conn_t *conn, fab__log_level_t level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fab__user_vlog(conn->user, level, fmt, ap);
    va_end(ap);
}

size_t fab__registry_tombstone_count(const fab__registry_t *daemon)
{
    return daemon->tombstones.count;
}

size_t fab__registry_ipc_count(const fab__registry_t *daemon)
{
    return daemon->ipcs.count;
}

static fab__ref_t *fab__ref_get(fab__conn_t *conn, uint64_t id)
{
    return fab__map_get(&conn->refs, id);
}

static void fab__ref_drop_id(fab__registry_t *daemon, fab__conn_t *conn, uint64_t id)
{
    fab__ref_t *ref = fab__ref_get(conn, id);
    if (ref != NULL)
        fab__ref_drop(daemon, ref);
}

void fab__registry_undo(fab__registry_t *daemon, fab__conn_t *conn, const fab__reply_t *reply)
{
    if (reply->status != FAB_SUCCESS)
        return;
    if (reply->type == FAB__MSG_ALLOC)
        fab__ref_drop_id(daemon, conn, reply->u.alloc.memory.region);
    else if (reply->type == FAB__MSG_IMPORT)
        fab__ref_drop_id(daemon, conn, reply->u.import.region);
    else if (reply->type == FAB__MSG_MC_JOIN) {
        /* Its memfds never reached the member: it leaves again. */
        fab__request_t leave = {.type = FAB__MSG_MC_LEAVE};
        fab__reply_t ignored;
        fab__reply_fds_t none = {0};
        int no_fd = -1;
        leave.u.mc.id = reply->u.mc.id;
        (void)fab__mcs_answer(daemon->mcs, conn, &leave, &no_fd, -1, &ignored, &none);
    }
    else if (reply->type == FAB__MSG_IMPORT_MANY) {
        for (unsigned i = 0; i < reply->u.import_many.count; i++) {
            if (reply->u.import_many.entries[i].status == FAB_SUCCESS)
                fab__ref_drop_id(daemon, conn, reply->u.import_many.entries[i].memory.region);
        }
    }
}

void fab__reply_fds_release(fab__reply_fds_t *fds)
{
    for (unsigned i = 0; i < fds->count; i++) {
        if (fds->owned & (1u << i))
            close(fds->fd[i]);
    }
    fds->count = 0;
    fds->owned = 0;
}

/* Whether user may hold one more live allocation of size bytes; says why
 * not in the log. */
static bool fab__user_may_allocate(fab__registry_t *daemon, fab__user_t *user, uint64_t size)
{
    const fab__limits_t *limits = &daemon->topology->limits;
    if (limits->allocations != 0 && user->allocations >= limits->allocations) {
        fab__user_log_refusal(user,
                         "uid %lu refused an allocation: it holds %llu, "
                         "max_allocations_per_uid is %llu", (unsigned long)user->uid,
                         (unsigned long long)user->allocations,
                         (unsigned long long)limits->allocations);
        return false;
    }
    if (limits->bytes != 0 && size > limits->bytes - user->bytes) {
        fab__user_log_refusal(user,
                         "uid %lu refused %llu bytes: it holds %llu, max_bytes_per_uid is %llu",
                         (unsigned long)user->uid, (unsigned long long)size,
                         (unsigned long long)user->bytes, (unsigned long long)limits->bytes);
        return false;
    }
    return true;
}

static fab_handle_t fab__alloc_mint(const fab__registry_t *daemon, const fab__alloc_t *alloc);

/* Make alloc live with memfd fd, charged to conn's user and node. */
static void fab__alloc_bring_live(fab__registry_t *daemon, fab__alloc_t *alloc, fab__conn_t *conn,
                                  int fd)
{
    fab_alloc_props_t props = fab_memory_props(alloc->memory);
    alloc->fd = fd;
    alloc->channels = conn->channels;
    alloc->node = conn->node;
    fab_handle_t minted = fab__alloc_mint(daemon, alloc);
    if (fab_memory_keep_handle(alloc->memory, &minted) != FAB_SUCCESS)
        abort(); /* minted from the object's own fields: cannot differ */
    alloc->owner = conn->user;
    conn->user->allocations++;
    conn->user->bytes += props.size;
    *fab__device_used(daemon, conn->node, props.device_ordinal) += props.size;
    daemon->bytes += props.size;
}

/* A new allocation record for memory the model calls memory (pending: no fd). */
static fab__alloc_t *fab__alloc_new(fab__registry_t *daemon, fab_memory_t *memory, uint64_t key)
{
    fab__alloc_t *alloc = calloc(1, sizeof(*alloc));
    if (alloc == NULL)
        return NULL;
    alloc->memory = memory;
    alloc->key = key;
    alloc->fd = -1;
    if (fab__map_put(&daemon->allocs, key, alloc) != 0) {
        free(alloc);
        return NULL;
    }
    return alloc;
}

/* ---- requests ------------------------------------------------------------------- */

static fab_status_t fab__request_hello(fab__registry_t *daemon, fab__conn_t *conn,
                                       const fab__request_t *request, fab__reply_t *reply)
{
    if (conn->node >= 0)
        return FAB_ERROR_ILLEGAL_STATE;
    if (request->u.hello.version < FAB__PROTO_VERSION_MIN ||
        request->u.hello.version > FAB__PROTO_VERSION)
        return FAB_ERROR_NOT_SUPPORTED;
    int node = 0;
    if (request->u.hello.name_len != 0) {
        fab_status_t status = fab_topology_find_node(daemon->topology, request->u.hello.name, &node);
        if (status != FAB_SUCCESS)
            return status;
    }
    conn->node = node;
    conn->version = request->u.hello.version;
    conn->channels = fab__topology_channels(daemon->topology, conn->uid, conn->gid);
    reply->u.hello.node = node;
    reply->u.hello.driver_version = (uint32_t)fab_topology_driver_version(daemon->topology);
    fab__user_log(conn->user, FAB__LOG_INFO, "client pid %ld uid %lu on node %s, channels %#llx", (long)conn->pid,
             (unsigned long)conn->uid, daemon->topology->nodes[node].info.name,
             (unsigned long long)conn->channels);
    return FAB_SUCCESS;
}

static fab_status_t fab__request_alloc(fab__registry_t *daemon, fab__conn_t *conn,
                                       const fab__request_t *request, fab__reply_t *reply,
                                       int *fd_out)
{
    int device = request->u.alloc.device;
    uint64_t size = request->u.alloc.size;
    /* The topology's rules, then the model's, then the fabric's own. */
    fab_status_t status = fab__topology_alloc_check(
        daemon->topology, conn->node, device, size, request->u.alloc.handle_type,
        fab__topology_slot(daemon->topology, conn->node, device) >= 0
            ? *fab__device_used(daemon, conn->node, device)
            : 0);
    if (status != FAB_SUCCESS)
        return status;
    fab_alloc_props_t props = {
        .device_ordinal = device,
        .size = (size_t)size,
        .peer_access = (fab_access_t)request->u.alloc.peer_access,
        .handle_type = (fab_handle_type_t)request->u.alloc.handle_type,
    };
    fab_uuid_t uuid;
    uint64_t key;
    do {
        randombytes_buf(uuid.bytes, sizeof(uuid.bytes));
        fab__le_put32(uuid.bytes + 8, daemon->epoch);
        key = fab__uuid_key(&uuid);
    } while (key == 0 || fab__map_get(&daemon->allocs, key) != NULL ||
             fab__set_has(&daemon->tombstones, key));
    fab_memory_t *memory;
    status = fab_memory_allocate(key, uuid, &props, &memory);
    if (status != FAB_SUCCESS)
        return status;
    status = FAB_ERROR_NOT_PERMITTED;
    if ((conn->channels & ~fab__faults_withdrawn(daemon->faults)) == 0)
        goto fail_memory;
    status = FAB_ERROR_OUT_OF_MEMORY;
    if (!fab__user_may_allocate(daemon, conn->user, props.size))
        goto fail_memory;
    char name[40];
    snprintf(name, sizeof(name), "fabmem:%016llx", (unsigned long long)key);
    int fd;
    status = fab__memfd_create(name, props.size, &fd);
    if (status != FAB_SUCCESS)
        goto fail_memory;
    status = FAB_ERROR_OUT_OF_MEMORY;
    fab__alloc_t *alloc = fab__alloc_new(daemon, memory, key);
    if (alloc == NULL)
        goto fail_fd;
    fab__alloc_bring_live(daemon, alloc, conn, fd);
    fab__ref_t *ref;
    if (fab__ref_add(daemon, conn, alloc, true, &ref) != FAB_SUCCESS) {
        fab__alloc_free(daemon, alloc); /* closes the fd */
        return FAB_ERROR_OUT_OF_MEMORY;
    }
    fab__reply_memory_t *out = &reply->u.alloc.memory;
    out->region = ref->id;
    out->uuid = uuid;
    out->size = props.size;
    out->access = (uint8_t)props.peer_access;
    out->device = device;
    reply->u.alloc.handle = *fab__alloc_handle(alloc);
    fab__creator_token(daemon, &uuid, reply->u.alloc.token);
    *fd_out = alloc->fd;
    return FAB_SUCCESS;

fail_fd:
    close(fd);
fail_memory:
    fab_memory_destroy(memory);
    return status;
}

/* The daemon's handle for an allocation: the model's layout with origin
 * FABRIC, the exporter's IMEX domain and the tag. Minted once, as the
 * allocation goes live; ALLOC and EXPORT replies carry the copy. */
static fab_handle_t fab__alloc_mint(const fab__registry_t *daemon, const fab__alloc_t *alloc)
{
    fab_handle_t handle;
    fab_alloc_props_t props = fab_memory_props(alloc->memory);
    fab_uuid_t uuid = fab_memory_uuid(alloc->memory);
    uint64_t domain = daemon->domain_ids[alloc->node];
    uint8_t tag[FAB_HANDLE_TAG_BYTES];
    /* The model vouches for the fields, so neither call can fail. */
    (void)fab_handle_encode(uuid, props.size, props.peer_access, FAB_HANDLE_ORIGIN_FABRIC, domain,
                            NULL, &handle);
    fab__handle_tag(daemon, handle.bytes, tag);
    (void)fab_handle_encode(uuid, props.size, props.peer_access, FAB_HANDLE_ORIGIN_FABRIC, domain,
                            tag, &handle);
    return handle;
}

static fab_status_t fab__request_export(fab__registry_t *daemon, fab__conn_t *conn,
                                        const fab__request_t *request, fab__reply_t *reply)
{
    fab__ref_t *ref = fab__ref_get(conn, request->u.region.region);
    if (ref == NULL)
        return FAB_ERROR_INVALID_HANDLE;
    /* The model decides and counts; the handle is the daemon's. */
    fab_status_t status = fab_memory_count_export(ref->alloc->memory);
    if (status != FAB_SUCCESS)
        return status;
    /* A live allocation's handle was minted as it went live; a pending
     * one's (parked importers only) is minted here. */
    reply->u.exported.handle = fab__alloc_live(ref->alloc) ? *fab__alloc_handle(ref->alloc)
                                                           : fab__alloc_mint(daemon, ref->alloc);
    return FAB_SUCCESS;
}

/* The allocation a handle names if the handle is authentic (bytes, origin,
 * tag); NULL with FAB_SUCCESS when it names none (freed, or not adopted
 * yet). *status_out says why a handle is not authentic. */
static fab__alloc_t *fab__handle_lookup(fab__registry_t *daemon, const fab_handle_t *handle,
                                        fab_status_t *status_out)
{
    *status_out = FAB_ERROR_INVALID_HANDLE;
    fab_handle_t intact;
    if (fab_handle_from_bytes(handle->bytes, FAB_HANDLE_BYTES, &intact) != FAB_SUCCESS ||
        fab_handle_origin(handle) != FAB_HANDLE_ORIGIN_FABRIC)
        return NULL;
    fab_uuid_t uuid = fab_handle_uuid(handle);
    fab__alloc_t *alloc = fab__map_get(&daemon->allocs, fab__uuid_key(&uuid));
    /* A live allocation keeps the handle minted for it: all 64 bytes equal
     * (compared in constant time, as the tag would be) is as good as a tag
     * that checks, since those bytes include the tag. Anything else (another
     * allocation under the same key word, a pending one, a freed one, a
     * forgery) is judged by the tag. */
    if (alloc != NULL && fab__alloc_live(alloc) && fab_handle_equal(fab__alloc_handle(alloc), handle)) {
        *status_out = FAB_SUCCESS;
        return alloc;
    }
    uint8_t tag[FAB_HANDLE_TAG_BYTES];
    fab__handle_tag(daemon, handle->bytes, tag);
    if (sodium_memcmp(tag, handle->bytes + FAB_HANDLE_TAG_OFFSET, sizeof(tag)) != 0)
        return NULL;
    *status_out = FAB_SUCCESS;
    if (alloc != NULL) {
        fab_uuid_t have = fab_memory_uuid(alloc->memory);
        if (!fab_uuid_equal(&have, &uuid))
            alloc = NULL;
    }
    return alloc;
}

/* The live allocation an authentic handle of this domain names, for a
 * connection that shares a channel with its creator: what IMPORT and VERIFY
 * both require. NULL with FAB_SUCCESS: authentic, but not live. */
static fab__alloc_t *fab__handle_live(fab__registry_t *daemon, const fab__conn_t *conn,
                                      const fab_handle_t *handle, fab_status_t *status_out)
{
    fab__alloc_t *alloc = fab__handle_lookup(daemon, handle, status_out);
    if (*status_out != FAB_SUCCESS)
        return NULL;
    if (fab_handle_domain(handle) != daemon->domain_ids[conn->node]) {
        *status_out = FAB_ERROR_INVALID_HANDLE;
        return NULL;
    }
    if (alloc == NULL || !fab__alloc_live(alloc))
        return NULL;
    if ((conn->channels & alloc->channels & ~fab__faults_withdrawn(daemon->faults)) == 0) {
        *status_out = FAB_ERROR_NOT_PERMITTED;
        return NULL;
    }
    return alloc;
}

/* One import of handle onto device: IMPORT's, and each of IMPORT_MANY's.
 * On success *out says what was handed out and *fd_out / *fd_owned the fd to
 * send (owned: a read-only reopening, the caller's to close once sent). */
static fab_status_t fab__import(fab__registry_t *daemon, fab__conn_t *conn, int device,
                                const fab_handle_t *handle, fab__reply_memory_t *out,
                                int *fd_out, int *fd_owned)
{
    const fab_topology_t *topology = daemon->topology;
    if (device < 0 || device >= topology->nodes[conn->node].info.device_count)
        return FAB_ERROR_INVALID_DEVICE;
    fab_status_t status;
    fab__alloc_t *alloc = fab__handle_live(daemon, conn, handle, &status);
    if (status != FAB_SUCCESS)
        return status;
    if (alloc == NULL)
        return FAB_ERROR_INVALID_HANDLE;
    /* Field faults: IMEX between nodes, isolated GPUs within one. */
    uint32_t fault = fab__faults_import(daemon->faults, alloc->node,
                                        fab_memory_props(alloc->memory).device_ordinal, conn->node,
                                        device);
    if (fault != FAB_SUCCESS)
        return (fab_status_t)fault;
    /* The connection's importer, made again only for another device. */
    fab_importer_t *importer = conn->importer;
    if (importer == NULL || fab_importer_device_ordinal(importer) != device) {
        status = fab_importer_create(device, &importer);
        if (status != FAB_SUCCESS)
            return status;
        fab_importer_destroy(conn->importer);
        conn->importer = importer;
    }
    /* The handle's domain was checked against ours already; what is left
     * of the topology's verdict is the fabric path. */
    fab_importer_set_reachable(importer,
                               fab_topology_path(topology, alloc->node, conn->node) == FAB_SUCCESS);
    fab_import_t import;
    status = fab_importer_import(importer, handle, &import);
    if (status != FAB_SUCCESS)
        return status;
    int fd = alloc->fd;
    int owned = 0;
    if (fab_import_access(&import) != FAB_ACCESS_READ_WRITE) {
        /* A read-only open of the same memory: the importer cannot map it
         * writable, whatever it tries (the inode's mode is 0400). It never
         * blocks: the memfd is ours, and a lease on it makes this fail. */
        fd = fab__memfd_reopen_read_only(alloc->fd);
        if (fd < 0) {
            fab__user_log(conn->user, FAB__LOG_WARN, "read-only descriptor for pid %ld: %s", (long)conn->pid,
                     strerror(errno));
            return FAB_ERROR_OUT_OF_MEMORY;
        }
        owned = 1;
    }
    fab__ref_t *ref;
    status = fab__ref_add(daemon, conn, alloc, false, &ref);
    if (status != FAB_SUCCESS) {
        if (owned)
            close(fd);
        return status;
    }
    if (fab_memory_export_count(alloc->memory) != 0)
        (void)fab_memory_retire_export(alloc->memory);
    out->region = ref->id;
    out->uuid = fab_import_uuid(&import);
    out->size = fab_import_size(&import);
    out->access = (uint8_t)fab_import_access(&import);
    out->device = device;
    /* Said to a client that can read it: the importer of plain memory then
     * asks no MC_JOIN. A team's token stays one after its team ends (MC_JOIN
     * then answers NOT_FOUND, as for any memory). */
    out->kind = conn->version < FAB__PROTO_VERSION_MEMORY_KIND ? FAB__MEMORY_UNSAID
                : alloc->mc_token                             ? FAB__MEMORY_MC_TOKEN
                                                              : FAB__MEMORY_PLAIN;
    *fd_out = fd;
    *fd_owned = owned;
    return FAB_SUCCESS;
}

static fab_status_t fab__request_import(fab__registry_t *daemon, fab__conn_t *conn,
                                        const fab__request_t *request, fab__reply_t *reply,
                                        fab__reply_fds_t *fds)
{
    int fd = -1, owned = 0;
    fab_status_t status = fab__import(daemon, conn, request->u.import.device,
                                      &request->u.import.handle, &reply->u.import, &fd, &owned);
    if (status == FAB_SUCCESS) {
        fds->fd[0] = fd;
        fds->owned = owned ? 1u : 0u;
        fds->count = 1;
    }
    return status;
}

/* IMPORT_MANY: each handle imported in turn as an IMPORT of its own would be
 * (fab__import: the same checks, in the same order, with the same
 * statuses), each import's status in its entry and its fd in the reply's
 * fds, in order; one that fails changes nothing for the others. A client
 * that said HELLO with an older version is refused: it could not read the
 * reply. When a hung IMEX would hold any of the imports, the ones made
 * before it are undone and the whole batch is held (FAB__FAULT_DEFERRED),
 * unless expired: then that import fails as a held IMPORT does at its
 * deadline, and the batch goes on. */
static fab_status_t fab__request_import_many(fab__registry_t *daemon, fab__conn_t *conn,
                                             const fab__request_t *request, fab__reply_t *reply,
                                             fab__reply_fds_t *fds, bool expired)
{
    if (conn->version < FAB__PROTO_VERSION_IMPORT_MANY)
        return FAB_ERROR_NOT_SUPPORTED;
    unsigned count = request->u.import_many.count;
    if (count == 0 || count > FAB__IMPORT_MANY_MAX)
        return FAB_ERROR_INVALID_VALUE; /* the decoder never lets one through */
    reply->u.import_many.count = (uint8_t)count;
    for (unsigned i = 0; i < count; i++) {
        int fd = -1, owned = 0;
        fab_status_t status = fab__import(daemon, conn, request->u.import_many.device,
                                          &request->handles[i],
                                          &reply->u.import_many.entries[i].memory, &fd, &owned);
        if ((uint32_t)status == FAB__FAULT_DEFERRED) {
            if (!expired) {
                reply->status = FAB_SUCCESS;
                reply->u.import_many.count = (uint8_t)i; /* what was made so far */
                fab__registry_undo(daemon, conn, reply);
                fab__reply_fds_release(fds);
                memset(&reply->u.import_many, 0, sizeof(reply->u.import_many));
                return (fab_status_t)FAB__FAULT_DEFERRED;
            }
            status = (fab_status_t)FAB__FAULT_HUNG_STATUS;
        }
        reply->u.import_many.entries[i].status = (uint32_t)status;
        if (status != FAB_SUCCESS)
            continue;
        if (owned)
            fds->owned |= 1u << fds->count;
        fds->fd[fds->count++] = fd;
    }
    return FAB_SUCCESS;
}

/* Drop reference id of conn, as RELEASE does. */
static fab_status_t fab__release_id(fab__registry_t *daemon, fab__conn_t *conn, uint64_t id,
                                    fab__reply_t *reply)
{
    fab__ref_t *ref = fab__ref_get(conn, id);
    if (ref == NULL)
        return FAB_ERROR_INVALID_HANDLE;
    fab__alloc_t *alloc = ref->alloc;
    reply->u.release.uuid = fab_memory_uuid(alloc->memory);
    uint32_t pending = fab_memory_export_count(alloc->memory);
    if (ref->creator && pending != 0) {
        /* The model refuses this release; the driver allows it. Say so. */
        char hex[33];
        fab__uuid_hex(&reply->u.release.uuid, hex);
        fab__user_log(conn->user, FAB__LOG_WARN, "allocation %s released by pid %ld with %u exported handles "
                 "never imported", hex, (long)conn->pid, pending);
        reply->u.release.unimported = pending;
    }
    fab__ref_drop(daemon, ref);
    return FAB_SUCCESS;
}

static fab_status_t fab__request_release(fab__registry_t *daemon, fab__conn_t *conn,
                                         const fab__request_t *request, fab__reply_t *reply)
{
    return fab__release_id(daemon, conn, request->u.region.region, reply);
}

/* The creator is back with its memory: each importer parked on alloc keeps
 * its reference only if it showed the same memory and shares a channel with
 * the creator; the others held something else and lose theirs. */
static void fab__parked_settle(fab__registry_t *daemon, fab__alloc_t *alloc, const struct stat *st)
{
    fab__ref_t *ref = alloc->parked;
    alloc->parked = NULL;
    while (ref != NULL) {
        fab__ref_t *next = ref->next_parked;
        ref->parked = false;
        ref->next_parked = NULL;
        if (ref->dev != st->st_dev || ref->ino != st->st_ino ||
            (ref->conn->channels & alloc->channels) == 0) {
            fab__user_log(ref->conn->user, FAB__LOG_WARN, "pid %ld held other memory than the creator brought back, "
                     "or shares no channel with it: its reference is dropped", (long)ref->conn->pid);
            fab__ref_drop(daemon, ref);
        }
        ref = next;
    }
}

/* A client hands back memory it held when the previous daemon went away.
 * Every ADOPT needs: an authentic handle of the client's IMEX domain whose
 * uuid this daemon never freed, a channel, and a sealed memfd of the
 * handle's size. A creator also needs its token and a read-write memfd; an
 * importer of live memory the same memory and a channel shared with it. */
static fab_status_t fab__request_adopt(fab__registry_t *daemon, fab__conn_t *conn,
                                       const fab__request_t *request, int *fd_in,
                                       fab__reply_t *reply)
{
    const fab_handle_t *handle = &request->u.import.handle;
    const fab__node_t *node = &daemon->topology->nodes[conn->node];
    int device = request->u.import.device;
    bool creator = request->u.import.creator != 0;
    if (*fd_in < 0)
        return *fd_in == FAB__FD_LOST ? FAB_ERROR_OUT_OF_MEMORY : FAB_ERROR_INVALID_VALUE;
    /* A creator's memory may live on a host NUMA node (its ordinal past the
     * GPUs'); an importer names the GPU it imported onto. */
    if (fab__topology_slot(daemon->topology, conn->node, device) < 0 ||
        (!creator && device >= node->info.device_count))
        return FAB_ERROR_INVALID_DEVICE;
    fab_status_t status;
    fab__alloc_t *alloc = fab__handle_lookup(daemon, handle, &status);
    if (status != FAB_SUCCESS)
        return status;
    fab_uuid_t uuid = fab_handle_uuid(handle);
    uint64_t key = fab__uuid_key(&uuid);
    char hex[33];
    fab__uuid_hex(&uuid, hex);
    if (fab_handle_domain(handle) != daemon->domain_ids[conn->node] || key == 0)
        return FAB_ERROR_INVALID_HANDLE;
    if (fab__set_has(&daemon->tombstones, key) ||
        (fab__uuid_ours(daemon, &uuid) && (alloc == NULL || !fab__alloc_live(alloc)))) {
        fab__user_log(conn->user, FAB__LOG_WARN, "pid %ld tried to bring back allocation %s, freed before",
                 (long)conn->pid, hex);
        return FAB_ERROR_INVALID_HANDLE;
    }
    char why[160];
    if (fab__memfd_check(*fd_in, fab_handle_size(handle), creator, why, sizeof(why)) != FAB_SUCCESS) {
        fab__user_log(conn->user, FAB__LOG_WARN, "ADOPT of %s by pid %ld refused: %s", hex, (long)conn->pid, why);
        return FAB_ERROR_INVALID_VALUE;
    }
    if (conn->channels == 0)
        return FAB_ERROR_NOT_PERMITTED;
    if (creator) {
        uint8_t token[FAB__TOKEN_BYTES];
        fab__creator_token(daemon, &uuid, token);
        if (sodium_memcmp(token, request->u.import.token, sizeof(token)) != 0) {
            fab__user_log(conn->user, FAB__LOG_WARN, "pid %ld claimed to have created %s without its token",
                     (long)conn->pid, hex);
            return FAB_ERROR_NOT_PERMITTED;
        }
    }
    struct stat st, have;
    if (fstat(*fd_in, &st) != 0)
        return FAB_ERROR_INVALID_VALUE;
    fab__ref_t *ref;
    if (alloc != NULL && fab__alloc_live(alloc)) {
        /* Already back: the fd must be the same memory. */
        if (fstat(alloc->fd, &have) != 0 || have.st_dev != st.st_dev || have.st_ino != st.st_ino)
            return FAB_ERROR_INVALID_HANDLE;
        if (!creator && (conn->channels & alloc->channels) == 0)
            return FAB_ERROR_NOT_PERMITTED;
        status = fab__ref_add(daemon, conn, alloc, creator, &ref);
        if (status != FAB_SUCCESS)
            return status;
    } else {
        /* The model's record: the creator's props replace what a parked
         * importer could only guess. */
        fab_alloc_props_t props = {
            .device_ordinal = device,
            .size = (size_t)fab_handle_size(handle),
            .peer_access = fab_handle_access(handle),
            .handle_type = creator ? (fab_handle_type_t)request->u.import.handle_type
                                   : FAB_HANDLE_TYPE_FABRIC,
        };
        bool made = alloc == NULL;
        fab_memory_t *memory = NULL;
        if (made || creator) {
            status = fab_memory_allocate(key, uuid, &props, &memory);
            if (status != FAB_SUCCESS)
                return status;
        }
        if (made) {
            alloc = fab__alloc_new(daemon, memory, key);
            if (alloc == NULL) {
                fab_memory_destroy(memory);
                return FAB_ERROR_OUT_OF_MEMORY;
            }
            alloc->node = conn->node; /* of the handle's domain: EXPORT names it */
            memory = NULL;
        }
        uint64_t size = fab_handle_size(handle);
        if (creator) {
            /* Memory coming back is an allocation again: the same rules. */
            status = fab__topology_alloc_check(daemon->topology, conn->node, device, size,
                                               request->u.import.handle_type,
                                               *fab__device_used(daemon, conn->node, device));
            if (status == FAB_SUCCESS && !fab__user_may_allocate(daemon, conn->user, size))
                status = FAB_ERROR_OUT_OF_MEMORY;
            if (status != FAB_SUCCESS)
                goto fail_made;
        }
        status = fab__ref_add(daemon, conn, alloc, creator, &ref);
        if (status != FAB_SUCCESS)
            goto fail_made;
        if (creator) {
            if (memory != NULL) {
                fab_memory_destroy(alloc->memory);
                alloc->memory = memory;
            }
            fab__alloc_bring_live(daemon, alloc, conn, *fd_in);
            *fd_in = -1; /* kept */
            fab__parked_settle(daemon, alloc, &st);
        } else {
            /* Its creator is not back yet: the reference counts from now
             * on, the memory is checked when the creator brings it. */
            ref->parked = true;
            ref->dev = st.st_dev;
            ref->ino = st.st_ino;
            ref->next_parked = alloc->parked;
            alloc->parked = ref;
            fab__user_log(conn->user, FAB__LOG_INFO, "pid %ld holds %s before its creator is back: parked",
                     (long)conn->pid, hex);
        }
        goto adopted;
    fail_made:
        fab_memory_destroy(memory);
        if (made)
            fab__alloc_free(daemon, alloc);
        return status;
    }
adopted:
    reply->u.import.region = ref->id;
    reply->u.import.uuid = uuid;
    reply->u.import.size = fab_memory_props(alloc->memory).size;
    reply->u.import.access = (uint8_t)fab_handle_access(handle);
    reply->u.import.device = device;
    return FAB_SUCCESS;
}

static long fab__rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f == NULL)
        return 0;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = 0;
    fclose(f);
    return resident * sysconf(_SC_PAGESIZE);
}

/* Whether this fabric minted the handle (any of its domains); whether its
 * memory is live only to a connection that could import it, as IMPORT asks:
 * a channel shared with the creator. */
static fab_status_t fab__request_verify(fab__registry_t *daemon, const fab__conn_t *conn,
                                        const fab__request_t *request, fab__reply_t *reply)
{
    const fab_handle_t *handle = &request->u.import.handle;
    fab_status_t status;
    const fab__alloc_t *alloc = fab__handle_lookup(daemon, handle, &status);
    if (status != FAB_SUCCESS)
        return status;
    bool ours = false;
    for (int i = 0; i < daemon->topology->nnodes; i++)
        ours = ours || daemon->domain_ids[i] == fab_handle_domain(handle);
    if (!ours)
        return FAB_ERROR_INVALID_HANDLE;
    if (alloc != NULL && fab__alloc_live(alloc)) {
        if ((conn->channels & alloc->channels) == 0)
            return FAB_ERROR_NOT_PERMITTED;
        reply->u.verify.live = 1;
    }
    return FAB_SUCCESS;
}

/* One node of the daemon's topology, the one truth every client learns it
 * from, with the node count and the driver version. */
static fab_status_t fab__request_topology(const fab__registry_t *daemon, const fab__request_t *request,
                                          fab__reply_t *reply)
{
    const fab_topology_t *topology = daemon->topology;
    if (request->u.topology.node >= (uint32_t)topology->nnodes)
        return FAB_ERROR_INVALID_VALUE;
    reply->u.topology.node = topology->nodes[request->u.topology.node];
    reply->u.topology.node_count = (uint32_t)topology->nnodes;
    reply->u.topology.driver_version = (uint32_t)topology->driver_version;
    return FAB_SUCCESS;
}

/* Global figures for the daemon's own uid and root; anyone else sees only
 * what its own uid holds. */
static void fab__request_stats(fab__registry_t *daemon, const fab__conn_t *conn, fab__reply_t *reply)
{
    fab__stats_t *out = &reply->u.stats;
    out->pid = (uint64_t)getpid();
    if (conn->uid != daemon->uid && conn->uid != 0) {
        const fab__user_t *user = conn->user;
        out->clients = user->connections;
        out->allocations = user->allocations;
        out->references = user->references;
        out->bytes = user->bytes;
        return;
    }
    out->clients = daemon->nconns;
    out->allocations = daemon->allocs.count;
    for (size_t i = 0; i < daemon->allocs.cap; i++) {
        const fab__alloc_t *a = daemon->allocs.slots[i].value;
        if (daemon->allocs.slots[i].key != 0)
            out->references += a->refs;
    }
    out->bytes = daemon->bytes;
    out->rss = (uint64_t)fab__rss_bytes();
}

/* ---- legacy CUDA IPC ---------------------------------------------------------------- */

/* The IPC handle's 64 bytes (little-endian):
 *    0  4  magic "FIPC"
 *    4  1  format version (1)
 *    5  1  kind (FAB__IPC_KIND_*)
 *    6  2  zero
 *    8  8  the daemon's id of the entry (random, never 0)
 *   16  4  the publisher's node index
 *   20  4  device ordinal on that node
 *   24  8  size in bytes
 *   32 16  zero
 *   48 16  keyed BLAKE2b of a label and bytes [0, 48): the daemon's key, so
 *          only this daemon (or one restarted with its state file) mints
 *          bytes it accepts, and no field can be altered. */
#define FAB__IPC_MAGIC 0x43504946u /* "FIPC" */
#define FAB__IPC_FORMAT 1
#define FAB__IPC_MAC_OFFSET 48

static void fab__ipc_mac(const fab__registry_t *daemon, const uint8_t *bytes, uint8_t mac[16])
{
    /* The label keeps an IPC MAC from ever equalling a fabric handle's tag
     * or a creator token made with the same key. */
    uint8_t in[8 + FAB__IPC_MAC_OFFSET] = {'c', 'u', 'd', 'a', 'i', 'p', 'c', 0};
    memcpy(in + 8, bytes, FAB__IPC_MAC_OFFSET);
    crypto_generichash(mac, 16, in, sizeof(in), daemon->key, sizeof(daemon->key));
}

static void fab__ipc_mint(const fab__registry_t *daemon, const fab__ipc_t *ipc, int node,
                          uint8_t out[FAB__IPC_HANDLE_BYTES])
{
    memset(out, 0, FAB__IPC_HANDLE_BYTES);
    fab__le_put32(out, FAB__IPC_MAGIC);
    out[4] = FAB__IPC_FORMAT;
    out[5] = ipc->kind;
    fab__le_put64(out + 8, ipc->id);
    fab__le_put32(out + 16, (uint32_t)node);
    fab__le_put32(out + 20, (uint32_t)ipc->device);
    fab__le_put64(out + 24, ipc->size);
    fab__ipc_mac(daemon, out, out + FAB__IPC_MAC_OFFSET);
}

/* A process publishes the memfd of its memory. The fd must be a memfd
 * sealed as every fabmem memfd is, of the size it claims, read-write (the
 * openers write through it); the device one of its node's. */
static fab_status_t fab__request_ipc_publish(fab__registry_t *daemon, fab__conn_t *conn,
                                             const fab__request_t *request, int *fd_in,
                                             fab__reply_t *reply)
{
    const fab__node_t *node = &daemon->topology->nodes[conn->node];
    int32_t device = request->u.ipc_publish.device;
    uint64_t size = request->u.ipc_publish.size;
    if (*fd_in < 0)
        return *fd_in == FAB__FD_LOST ? FAB_ERROR_OUT_OF_MEMORY : FAB_ERROR_INVALID_VALUE;
    if (device < 0 || device >= node->info.device_count)
        return FAB_ERROR_INVALID_DEVICE;
    /* Each entry holds a descriptor of the daemon's: counted against the
     * publisher's uid, so that one uid cannot take them all from the
     * others, channel or none. */
    uint64_t max = daemon->topology->limits.ipc_entries;
    if (max != 0 && conn->user->ipcs >= max) {
        fab__user_log_refusal(conn->user,
                      "IPC_PUBLISH by pid %ld (uid %lu) refused: it holds %llu IPC entries, "
                      "max_ipc_entries_per_uid is %llu", (long)conn->pid, (unsigned long)conn->uid,
                      (unsigned long long)conn->user->ipcs, (unsigned long long)max);
        return FAB_ERROR_OUT_OF_MEMORY;
    }
    char why[160];
    if (size == 0 || fab__memfd_check(*fd_in, size, 1, why, sizeof(why)) != FAB_SUCCESS) {
        fab__user_log(conn->user, FAB__LOG_WARN, "IPC_PUBLISH by pid %ld refused: %s", (long)conn->pid,
                 size == 0 ? "size 0" : why);
        return FAB_ERROR_INVALID_VALUE;
    }
    fab__ipc_t *ipc = calloc(1, sizeof(*ipc));
    if (ipc == NULL)
        return FAB_ERROR_OUT_OF_MEMORY;
    do
        randombytes_buf(&ipc->id, sizeof(ipc->id));
    while (ipc->id == 0 || fab__map_get(&daemon->ipcs, ipc->id) != NULL);
    ipc->conn = conn;
    ipc->fd = *fd_in;
    ipc->kind = request->u.ipc_publish.kind;
    ipc->device = device;
    ipc->size = size;
    if (fab__map_put(&daemon->ipcs, ipc->id, ipc) != 0) {
        free(ipc);
        return FAB_ERROR_OUT_OF_MEMORY;
    }
    if (fab__map_put(&conn->ipcs, ipc->id, ipc) != 0) {
        fab__map_remove(&daemon->ipcs, ipc->id);
        free(ipc);
        return FAB_ERROR_OUT_OF_MEMORY;
    }
    *fd_in = -1; /* kept */
    conn->user->ipcs++;
    fab__ipc_mint(daemon, ipc, conn->node, reply->u.ipc_publish.bytes);
    return FAB_SUCCESS;
}

/* The live entry that authentic handle bytes name; NULL with the status:
 * INVALID_VALUE for bytes this daemon did not mint (or that were altered)
 * and for a withdrawn handle, as the driver answers a handle it cannot
 * resolve. */
static fab__ipc_t *fab__ipc_find(fab__registry_t *daemon, const uint8_t *bytes,
                                 fab_status_t *status)
{
    uint8_t mac[16];
    *status = FAB_ERROR_INVALID_VALUE;
    if (fab__le_get32(bytes) != FAB__IPC_MAGIC || bytes[4] != FAB__IPC_FORMAT)
        return NULL;
    fab__ipc_mac(daemon, bytes, mac);
    if (sodium_memcmp(mac, bytes + FAB__IPC_MAC_OFFSET, sizeof(mac)) != 0)
        return NULL;
    fab__ipc_t *ipc = fab__map_get(&daemon->ipcs, fab__le_get64(bytes + 8));
    if (ipc == NULL)
        return NULL;
    *status = FAB_SUCCESS;
    return ipc;
}

/* Another process opens a handle: same node as the publisher (the handle
 * says which), not the publisher itself, a handle still published. */
static fab_status_t fab__request_ipc_open(fab__registry_t *daemon, fab__conn_t *conn,
                                          const fab__request_t *request, fab__reply_t *reply,
                                          int *fd_out, int *fd_owned)
{
    const uint8_t *bytes = request->u.ipc.bytes;
    fab_status_t status;
    fab__ipc_t *ipc = fab__ipc_find(daemon, bytes, &status);
    if (ipc == NULL) {
        fab__user_log(conn->user, FAB__LOG_INFO, "IPC_OPEN by pid %ld: %s handle", (long)conn->pid,
                 fab__le_get32(bytes) == FAB__IPC_MAGIC ? "a forged, altered or withdrawn"
                                                        : "not an IPC");
        return status;
    }
    if ((int)fab__le_get32(bytes + 16) != conn->node) {
        fab__user_log(conn->user, FAB__LOG_INFO, "IPC_OPEN by pid %ld on node %s: the handle is of node %s",
                 (long)conn->pid, daemon->topology->nodes[conn->node].info.name,
                 daemon->topology->nodes[ipc->conn->node].info.name);
        return FAB_ERROR_INVALID_VALUE;
    }
    if (ipc->conn->pid == conn->pid) {
        fab__user_log(conn->user, FAB__LOG_INFO, "IPC_OPEN by pid %ld of its own handle", (long)conn->pid);
        return FAB_ERROR_INVALID_CONTEXT;
    }
    /* A descriptor of the reply's own: the publisher may withdraw (and the
     * entry's fd close) while this reply waits for the opener to read. */
    int fd = fcntl(ipc->fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0)
        return FAB_ERROR_OUT_OF_MEMORY;
    reply->u.ipc_open.kind = ipc->kind;
    reply->u.ipc_open.device = ipc->device;
    reply->u.ipc_open.size = ipc->size;
    *fd_out = fd;
    *fd_owned = 1;
    return FAB_SUCCESS;
}

/* The publisher withdraws a handle (cuMemFree, cuEventDestroy): later opens
 * fail; mappings already made keep their pages. Only its publisher may. */
static fab_status_t fab__request_ipc_withdraw(fab__registry_t *daemon, fab__conn_t *conn,
                                              const fab__request_t *request)
{
    fab_status_t status;
    fab__ipc_t *ipc = fab__ipc_find(daemon, request->u.ipc.bytes, &status);
    if (ipc == NULL)
        return status;
    if (ipc->conn != conn)
        return FAB_ERROR_NOT_PERMITTED;
    fab__ipc_drop(daemon, ipc);
    return FAB_SUCCESS;
}

/* The released ids a request carries: each dropped as a RELEASE would
 * drop it, before the request itself is answered, with no reply. One the
 * connection does not hold is logged and changes nothing. */
static void fab__releases_apply(fab__registry_t *daemon, fab__conn_t *conn,
                                const fab__request_t *request)
{
    for (unsigned i = 0; i < request->nreleases; i++) {
        fab__reply_t ignored;
        if (fab__release_id(daemon, conn, request->releases[i], &ignored) != FAB_SUCCESS)
            fab__user_log(conn->user, FAB__LOG_WARN,
                             "pid %ld released region %llu, which it does not hold",
                             (long)conn->pid, (unsigned long long)request->releases[i]);
    }
}

/* The bytes of a reply that every type but TOPOLOGY uses. A new reply type
 * adds its member to this list (or clears what it leaves unset). */
static size_t fab__reply_small_size(void)
{
    /* One constant expression, folded at compile time (a loop over an
     * array of the sizes was run on every reply). */
#define FAB__MAX_(a, b) ((a) > (b) ? (a) : (b))
#define FAB__MEMBER_(m) sizeof(((const fab__reply_t *)0)->u.m)
    enum {
        most = FAB__MAX_(
            FAB__MAX_(FAB__MAX_(FAB__MAX_(FAB__MEMBER_(hello), FAB__MEMBER_(alloc)),
                                FAB__MAX_(FAB__MEMBER_(exported), FAB__MEMBER_(import))),
                      FAB__MAX_(FAB__MAX_(FAB__MEMBER_(release), FAB__MEMBER_(stats)),
                                FAB__MAX_(FAB__MEMBER_(verify), FAB__MEMBER_(ipc_publish)))),
            FAB__MAX_(FAB__MEMBER_(ipc_open), FAB__MEMBER_(mc)))
    };
#undef FAB__MEMBER_
#undef FAB__MAX_
    return offsetof(fab__reply_t, u) + most;
}

/* Clear what the reply to request uses, and fill its header. */
static void fab__reply_start(const fab__request_t *request, fab__reply_t *reply,
                             fab__reply_fds_t *fds)
{
    /* A TOPOLOGY reply carries a whole node record, an IMPORT_MANY reply up
     * to sixteen entries; the others fit in the first bytes of the union,
     * and clearing only those keeps a 1.5 KB memset off every import. */
    if (request->type == FAB__MSG_TOPOLOGY)
        memset(reply, 0, sizeof(*reply));
    else if (request->type == FAB__MSG_IMPORT_MANY)
        memset(reply, 0, offsetof(fab__reply_t, u) + sizeof(reply->u.import_many));
    else
        memset(reply, 0, fab__reply_small_size());
    reply->type = request->type;
    reply->seq = request->seq;
    fds->count = 0;
    fds->owned = 0;
}

void fab__registry_answer_expired(fab__registry_t *daemon, fab__conn_t *conn,
                                  const fab__request_t *request, fab__reply_t *reply,
                                  fab__reply_fds_t *fds_out)
{
    fab__reply_start(request, reply, fds_out);
    if (request->type == FAB__MSG_IMPORT_MANY && conn->node >= 0)
        reply->status = (uint32_t)fab__request_import_many(daemon, conn, request, reply, fds_out,
                                                           true);
    else
        reply->status = FAB__FAULT_HUNG_STATUS;
}

void fab__registry_answer(fab__registry_t *daemon, fab__conn_t *conn, const fab__request_t *request,
                        int fd_in, fab__reply_t *reply, fab__reply_fds_t *fds_out)
{
    fab__reply_start(request, reply, fds_out);
    int fd_out = -1, fd_owned = 0;
    fab_status_t status;
    if (request->type != FAB__MSG_HELLO && conn->node < 0) {
        if (fd_in >= 0)
            close(fd_in);
        reply->status = FAB_ERROR_ILLEGAL_STATE; /* out of order: hello first */
        return;
    }
    fab__releases_apply(daemon, conn, request);
    if (request->type == FAB__MSG_ADOPT) {
        reply->status = (uint32_t)fab__request_adopt(daemon, conn, request, &fd_in, reply);
        if (fd_in >= 0)
            close(fd_in);
        return;
    }
    if (request->type == FAB__MSG_IPC_PUBLISH) {
        reply->status = (uint32_t)fab__request_ipc_publish(daemon, conn, request, &fd_in, reply);
        if (fd_in >= 0)
            close(fd_in);
        return;
    }
    if (request->type >= FAB__MSG_MC_CREATE && request->type <= FAB__MSG_MC_LEAVE) {
        /* MC_CREATE names its token by the sender's reference: one it
         * allocated, that nobody else holds, live. */
        int token_fd = -1;
        fab__alloc_t *token = NULL;
        if (request->type == FAB__MSG_MC_CREATE) {
            fab__ref_t *ref = fab__ref_get(conn, request->u.mc.id);
            if (ref != NULL && ref->creator && !ref->parked && ref->alloc->refs == 1 &&
                fab__alloc_live(ref->alloc)) {
                token = ref->alloc;
                token_fd = token->fd;
            }
        }
        reply->status = (uint32_t)fab__mcs_answer(daemon->mcs, conn, request, &fd_in, token_fd,
                                                  reply, fds_out);
        if (token != NULL && reply->status == FAB_SUCCESS)
            token->mc_token = true; /* its imports say so (FAB__MEMORY_MC_TOKEN) */
        return;
    }
    if (fd_in >= 0)
        close(fd_in); /* nothing else takes one */
    switch (request->type) {
    case FAB__MSG_HELLO:
        status = fab__request_hello(daemon, conn, request, reply);
        break;
    case FAB__MSG_ALLOC:
        status = fab__request_alloc(daemon, conn, request, reply, &fd_out);
        break;
    case FAB__MSG_EXPORT:
        status = fab__request_export(daemon, conn, request, reply);
        break;
    case FAB__MSG_IMPORT:
        status = fab__request_import(daemon, conn, request, reply, fds_out);
        break;
    case FAB__MSG_IMPORT_MANY:
        status = fab__request_import_many(daemon, conn, request, reply, fds_out, false);
        break;
    case FAB__MSG_RELEASE:
        status = fab__request_release(daemon, conn, request, reply);
        break;
    case FAB__MSG_STATS:
        fab__request_stats(daemon, conn, reply);
        status = FAB_SUCCESS;
        break;
    case FAB__MSG_VERIFY:
        status = fab__request_verify(daemon, conn, request, reply);
        break;
    case FAB__MSG_TOPOLOGY:
        status = fab__request_topology(daemon, request, reply);
        break;
    case FAB__MSG_IPC_OPEN:
        status = fab__request_ipc_open(daemon, conn, request, reply, &fd_out, &fd_owned);
        break;
    case FAB__MSG_IPC_WITHDRAW:
        status = fab__request_ipc_withdraw(daemon, conn, request);
        break;
    case FAB__MSG_FAULT:
        /* The fabric is the owner's to break: nobody else's job may be
         * made to fail by another user. */
        status = conn->uid != daemon->uid ? FAB_ERROR_NOT_PERMITTED
                                          : fab__faults_apply(daemon->faults, request);
        break;
    default:
        status = FAB_ERROR_INVALID_VALUE;
        break;
    }
    if (fd_out >= 0) {
        fds_out->fd[0] = fd_out;
        fds_out->owned = fd_owned ? 1u : 0u;
        fds_out->count = 1;
    }
    reply->status = (uint32_t)status;
}

fab__faults_t *fab__registry_faults(fab__registry_t *daemon)
{
    return daemon->faults;
}
