/* The registry's lifecycle (see registry.h; its records are in
 * registry_impl.h): made and destroyed, its connections opened, reset and
 * closed, allocations brought live and freed, references added and dropped.
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
 *          dispatch.c hands the MC_* requests and this file each closing
 *          connection */
#include "src/daemon/registry_impl.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/base/hot.h"
#include "src/base/le.h"
#include "src/common/log.h"
#include "src/common/topology_impl.h"
#include "src/daemon/fieldfaults.h"
#include "src/daemon/teams.h"

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

/* ---- allocations and references ------------------------------------------------ */

/* The bytes in use on one place of node's memory: a GPU, or a host NUMA node
 * (device FAB_HOST_NUMA_ORDINAL_BASE + n), each counted on its own. device is
 * one the topology knows (fab__topology_alloc_check said so). */
uint64_t *fab__device_used(fab__registry_t *daemon, int node, int device)
{
    return &daemon->used[daemon->device_base[node] +
                         fab__topology_slot(daemon->topology, node, device)];
}

void fab__alloc_free(fab__registry_t *daemon, fab__alloc_t *alloc)
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
FAB__HOT
fab_status_t fab__ref_add(fab__registry_t *daemon, fab__conn_t *conn, fab__alloc_t *alloc,
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
FAB__HOT
void fab__ref_drop(fab__registry_t *daemon, fab__ref_t *ref)
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
            fab__user_free(daemon->users.slots[i].value);
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

size_t fab__registry_tombstone_count(const fab__registry_t *daemon)
{
    return daemon->tombstones.count;
}

size_t fab__registry_ipc_count(const fab__registry_t *daemon)
{
    return daemon->ipcs.count;
}

FAB__HOT
fab__ref_t *fab__ref_get(fab__conn_t *conn, uint64_t id)
{
    return fab__map_get(&conn->refs, id);
}

/* Make alloc live with memfd fd, charged to conn's user and node. */
void fab__alloc_bring_live(fab__registry_t *daemon, fab__alloc_t *alloc, fab__conn_t *conn,
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
fab__alloc_t *fab__alloc_new(fab__registry_t *daemon, fab_memory_t *memory, uint64_t key)
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

fab__faults_t *fab__registry_faults(fab__registry_t *daemon)
{
    return daemon->faults;
}
