/* The requests on allocations, one handler each (fab__reg_*): HELLO, ALLOC,
 * EXPORT, IMPORT, IMPORT_MANY, RELEASE, ADOPT, VERIFY, TOPOLOGY and STATS
 * (dispatch.c calls them; legacy IPC's are ipc.c's, the teams' teams.c's).
 *
 * Every question of rule is put to the model (fab_memory_*, fab_importer_*);
 * the registry adds what the model has no notion of: real memory (a memfd per
 * allocation), who holds a reference, IMEX channels, topology, and the keyed tag
 * that makes a handle unforgeable.
 *
 * Order of checks on IMPORT, so that each failure reports what the driver
 * would: hello, device (INVALID_DEVICE); handle bytes, origin, tag, IMEX
 * domain, liveness (INVALID_HANDLE); channel (NOT_PERMITTED); reachability
 * and grant, by the model (NOT_SUPPORTED, NOT_PERMITTED). IMPORT_MANY puts
 * each of its handles through the same function (fab__import), in order.
 */
#include "src/daemon/registry_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/base/hot.h"
#include "src/base/le.h"
#include "src/common/log.h"
#include "src/common/memfd.h"
#include "src/common/topology_impl.h"
#include "src/daemon/fieldfaults.h"

/* A live allocation's handle: minted as it went live and kept by its model
 * object (fab_memory_handle), so that an IMPORT compares 64 bytes instead of
 * computing a tag. */
static const fab_handle_t *fab__alloc_handle(const fab__alloc_t *alloc)
{
    return fab_memory_handle(alloc->memory);
}

fab_status_t fab__reg_hello(fab__registry_t *daemon, fab__conn_t *conn,
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

fab_status_t fab__reg_alloc(fab__registry_t *daemon, fab__conn_t *conn,
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

fab_status_t fab__reg_export(fab__registry_t *daemon, fab__conn_t *conn,
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
FAB__HOT
static fab__alloc_t *fab__handle_lookup(fab__registry_t *daemon, const fab_handle_t *handle,
                                        fab_status_t *status_out)
{
    fab_uuid_t uuid = fab_handle_uuid(handle);
    fab__alloc_t *alloc = fab__map_get(&daemon->allocs, fab__uuid_key(&uuid));
    /* A live allocation keeps the handle minted for it: all 64 bytes equal
     * (compared in constant time, as the tag would be) is as good as a tag
     * that checks, since those bytes include the tag, and as good as the
     * format's checks, which the minted handle passed. Anything else
     * (another allocation under the same key word, a pending one, a freed
     * one, a forgery, bytes that are no handle) is judged by the format and
     * then by the tag. */
    if (alloc != NULL && fab__alloc_live(alloc) && fab_handle_equal(fab__alloc_handle(alloc), handle) &&
        fab_handle_origin(handle) == FAB_HANDLE_ORIGIN_FABRIC) {
        *status_out = FAB_SUCCESS;
        return alloc;
    }
    *status_out = FAB_ERROR_INVALID_HANDLE;
    fab_handle_t intact;
    if (fab_handle_from_bytes(handle->bytes, FAB_HANDLE_BYTES, &intact) != FAB_SUCCESS ||
        fab_handle_origin(handle) != FAB_HANDLE_ORIGIN_FABRIC)
        return NULL;
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
FAB__HOT
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

FAB__HOT
fab_status_t fab__reg_import(fab__registry_t *daemon, fab__conn_t *conn,
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
fab_status_t fab__reg_import_many(fab__registry_t *daemon, fab__conn_t *conn,
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
FAB__HOT
fab_status_t fab__release_id(fab__registry_t *daemon, fab__conn_t *conn, uint64_t id,
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

fab_status_t fab__reg_release(fab__registry_t *daemon, fab__conn_t *conn,
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
fab_status_t fab__reg_adopt(fab__registry_t *daemon, fab__conn_t *conn,
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
fab_status_t fab__reg_verify(fab__registry_t *daemon, const fab__conn_t *conn,
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
fab_status_t fab__reg_topology(const fab__registry_t *daemon, const fab__request_t *request,
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
void fab__reg_stats(fab__registry_t *daemon, const fab__conn_t *conn, fab__reply_t *reply)
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
