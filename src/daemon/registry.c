/* The daemon's registry and rules (see registry.h). Every question of rule is
 * put to the model (fab_memory_*, fab_importer_*); the registry adds what the
 * model has no notion of: real memory (a memfd per allocation), who holds a
 * reference, IMEX channels, topology, and the keyed tag that makes a handle
 * unforgeable.
 *
 * Order of checks on IMPORT, so that each failure reports what the driver
 * would: hello, device (INVALID_DEVICE); handle bytes, origin, tag, IMEX
 * domain, liveness (INVALID_HANDLE); channel (NOT_PERMITTED); reachability
 * and grant, by the model (NOT_SUPPORTED, NOT_PERMITTED). */
#include "src/daemon/registry.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/core/handle_format.h"
#include "src/fabric/log.h"
#include "src/fabric/topology.h"

typedef struct fab__alloc {
    fab_memory_t *memory; /* the model's object: uuid, props, export count */
    uint64_t channels;    /* the creator's channels when it allocated */
    uint64_t key;         /* its key in daemon->allocs */
    int fd;               /* the memfd */
    uint32_t refs;
    uint16_t node;
} fab__alloc_t;

struct fab__daemon {
    const fab_topology_t *topology;
    uint8_t key[FAB__KEY_BYTES];
    uint64_t *domain_ids; /* per node: id of its IMEX domain */
    uint64_t *used;       /* per node and device: bytes allocated */
    int *device_base;     /* per node: its first entry in used */
    fab__map_t allocs;    /* uuid word -> fab__alloc_t */
    size_t nconns;
    uint64_t bytes;
};

#define FAB__REF_CREATOR 1u

static uint64_t fab__uuid_key(const fab_uuid_t *uuid)
{
    uint64_t k = 0;
    for (int i = 0; i < 8; i++)
        k |= (uint64_t)uuid->bytes[i] << (8 * i);
    return k;
}

static void fab__uuid_hex(const fab_uuid_t *uuid, char out[33])
{
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", uuid->bytes[i]);
}

/* The tag: keyed BLAKE2b over the bytes it covers, cut to 16 bytes. */
static void fab__handle_tag(const fab__daemon_t *daemon, const uint8_t *bytes,
                            uint8_t tag[FAB_HANDLE_TAG_BYTES])
{
    crypto_generichash(tag, FAB_HANDLE_TAG_BYTES, bytes, FAB__HANDLE_OFF_TAG, daemon->key,
                       sizeof(daemon->key));
}

fab__daemon_t *fab__daemon_create(const fab_topology_t *topology, const uint8_t key[FAB__KEY_BYTES])
{
    if (sodium_init() < 0)
        return NULL;
    fab__daemon_t *daemon = calloc(1, sizeof(*daemon));
    if (daemon == NULL)
        return NULL;
    daemon->topology = topology;
    memcpy(daemon->key, key, FAB__KEY_BYTES);
    int n = topology->nnodes, total = 0;
    daemon->domain_ids = calloc((size_t)n, sizeof(*daemon->domain_ids));
    daemon->device_base = calloc((size_t)n, sizeof(*daemon->device_base));
    for (int i = 0; i < n; i++)
        total += topology->nodes[i].info.device_count;
    daemon->used = calloc((size_t)total + 1, sizeof(*daemon->used));
    if (daemon->domain_ids == NULL || daemon->device_base == NULL || daemon->used == NULL) {
        fab__daemon_destroy(daemon);
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
        uint64_t v = 0;
        for (int k = 0; k < 8; k++)
            v |= (uint64_t)id[k] << (8 * k);
        daemon->domain_ids[i] = v ? v : 1;
        daemon->device_base[i] = total;
        total += topology->nodes[i].info.device_count;
    }
    return daemon;
}

static void fab__alloc_unref(fab__daemon_t *daemon, fab__alloc_t *alloc)
{
    if (--alloc->refs != 0)
        return;
    char hex[33];
    fab_uuid_t uuid = fab_memory_uuid(alloc->memory);
    fab__uuid_hex(&uuid, hex);
    fab__log(FAB__LOG_DEBUG, "allocation %s freed", hex);
    fab_alloc_props_t props = fab_memory_props(alloc->memory);
    daemon->used[daemon->device_base[alloc->node] + props.device_ordinal] -= props.size;
    daemon->bytes -= props.size;
    fab__map_remove(&daemon->allocs, alloc->key);
    close(alloc->fd);
    fab_memory_destroy(alloc->memory);
    free(alloc);
}

fab__conn_t *fab__daemon_conn_open(fab__daemon_t *daemon, uid_t uid, gid_t gid, pid_t pid)
{
    fab__conn_t *conn = calloc(1, sizeof(*conn));
    if (conn == NULL)
        return NULL;
    conn->uid = uid;
    conn->gid = gid;
    conn->pid = pid;
    conn->node = -1;
    conn->next_ref = 1;
    daemon->nconns++;
    return conn;
}

void fab__daemon_conn_close(fab__daemon_t *daemon, fab__conn_t *conn)
{
    if (conn == NULL)
        return;
    for (size_t i = 0; i < conn->refs.cap; i++) {
        if (conn->refs.slots[i].key != 0) {
            uintptr_t v = (uintptr_t)conn->refs.slots[i].value;
            fab__alloc_unref(daemon, (fab__alloc_t *)(v & ~(uintptr_t)FAB__REF_CREATOR));
        }
    }
    fab__map_free(&conn->refs);
    daemon->nconns--;
    free(conn);
}

void fab__daemon_destroy(fab__daemon_t *daemon)
{
    if (daemon == NULL)
        return;
    /* Connections are closed by their owner first; what is left here is
     * only possible if it did not, so free what remains. */
    for (size_t i = 0; i < daemon->allocs.cap; i++) {
        fab__alloc_t *alloc = daemon->allocs.slots[i].value;
        if (daemon->allocs.slots[i].key != 0) {
            close(alloc->fd);
            fab_memory_destroy(alloc->memory);
            free(alloc);
        }
    }
    fab__map_free(&daemon->allocs);
    sodium_memzero(daemon->key, sizeof(daemon->key));
    free(daemon->domain_ids);
    free(daemon->used);
    free(daemon->device_base);
    free(daemon);
}

size_t fab__daemon_conn_count(const fab__daemon_t *daemon)
{
    return daemon->nconns;
}

size_t fab__daemon_alloc_count(const fab__daemon_t *daemon)
{
    return daemon->allocs.count;
}

static fab__alloc_t *fab__ref_get(fab__conn_t *conn, uint64_t id, int *creator)
{
    uintptr_t v = (uintptr_t)fab__map_get(&conn->refs, id);
    if (creator != NULL)
        *creator = (v & FAB__REF_CREATOR) != 0;
    return (fab__alloc_t *)(v & ~(uintptr_t)FAB__REF_CREATOR);
}

static fab_status_t fab__ref_add(fab__conn_t *conn, fab__alloc_t *alloc, int creator,
                                 uint64_t *id_out)
{
    uint64_t id = conn->next_ref++;
    void *value = (void *)((uintptr_t)alloc | (creator ? FAB__REF_CREATOR : 0));
    if (fab__map_put(&conn->refs, id, value) != 0)
        return FAB_ERROR_OUT_OF_MEMORY;
    alloc->refs++;
    *id_out = id;
    return FAB_SUCCESS;
}

static fab_handle_t fab__alloc_handle(const fab__daemon_t *daemon, const fab__alloc_t *alloc);

static fab_status_t fab__handle_hello(fab__daemon_t *daemon, fab__conn_t *conn,
                                      const fab__request_t *request, fab__reply_t *reply)
{
    if (conn->node >= 0)
        return FAB_ERROR_ILLEGAL_STATE;
    if (request->u.hello.version != FAB__PROTO_VERSION)
        return FAB_ERROR_NOT_SUPPORTED;
    int node = 0;
    if (request->u.hello.name_len != 0) {
        fab_status_t status = fab_topology_find_node(daemon->topology, request->u.hello.name, &node);
        if (status != FAB_SUCCESS)
            return status;
    }
    conn->node = node;
    conn->channels = fab__topology_channels(daemon->topology, conn->uid, conn->gid);
    reply->node = node;
    reply->count = (uint32_t)fab_topology_driver_version(daemon->topology);
    fab__log(FAB__LOG_INFO, "client pid %ld uid %lu on node %s, channels %#llx", (long)conn->pid,
             (unsigned long)conn->uid, daemon->topology->nodes[node].info.name,
             (unsigned long long)conn->channels);
    return FAB_SUCCESS;
}

static fab_status_t fab__handle_alloc(fab__daemon_t *daemon, fab__conn_t *conn,
                                      const fab__request_t *request, fab__reply_t *reply,
                                      int *fd_out)
{
    const fab__node_t *node = &daemon->topology->nodes[conn->node];
    int device = request->u.alloc.device;
    if (device < 0 || device >= node->info.device_count)
        return FAB_ERROR_INVALID_DEVICE;
    fab_alloc_props_t props = {
        .device_ordinal = device,
        .size = (size_t)request->u.alloc.size,
        .peer_access = (fab_access_t)request->u.alloc.peer_access,
        .handle_type = (fab_handle_type_t)request->u.alloc.handle_type,
    };
    fab_uuid_t uuid;
    uint64_t key;
    do {
        randombytes_buf(uuid.bytes, sizeof(uuid.bytes));
        key = fab__uuid_key(&uuid);
    } while (key == 0 || fab__map_get(&daemon->allocs, key) != NULL);
    fab_memory_t *memory;
    fab_status_t status = fab_memory_allocate(key, uuid, &props, &memory);
    if (status != FAB_SUCCESS)
        return status;
    status = FAB_ERROR_INVALID_VALUE;
    if (props.size % node->device.granularity != 0 || props.size > (uint64_t)INT64_MAX)
        goto fail_memory;
    status = FAB_ERROR_NOT_SUPPORTED;
    if ((props.handle_type & ~node->device.handle_types) != 0)
        goto fail_memory;
    status = FAB_ERROR_NOT_PERMITTED;
    if (conn->channels == 0)
        goto fail_memory;
    uint64_t *used = &daemon->used[daemon->device_base[conn->node] + device];
    status = FAB_ERROR_OUT_OF_MEMORY;
    if (props.size > node->device.total_memory - *used)
        goto fail_memory;
    fab__alloc_t *alloc = calloc(1, sizeof(*alloc));
    if (alloc == NULL)
        goto fail_memory;
    char name[40];
    snprintf(name, sizeof(name), "fabmem:%016llx", (unsigned long long)key);
    alloc->fd = memfd_create(name, MFD_CLOEXEC);
    if (alloc->fd < 0)
        goto fail_alloc;
    if (ftruncate(alloc->fd, (off_t)props.size) != 0)
        goto fail_fd;
    alloc->memory = memory;
    alloc->channels = conn->channels;
    alloc->key = key;
    alloc->node = (uint16_t)conn->node;
    if (fab__map_put(&daemon->allocs, key, alloc) != 0)
        goto fail_fd;
    uint64_t id;
    if (fab__ref_add(conn, alloc, 1, &id) != FAB_SUCCESS)
        goto fail_registered;
    *used += props.size;
    daemon->bytes += props.size;
    reply->region = id;
    reply->uuid = uuid;
    reply->size = props.size;
    reply->access = (uint8_t)props.peer_access;
    reply->node = device;
    reply->handle = fab__alloc_handle(daemon, alloc);
    *fd_out = alloc->fd;
    return FAB_SUCCESS;

fail_registered:
    fab__map_remove(&daemon->allocs, key);
fail_fd:
    close(alloc->fd);
fail_alloc:
    free(alloc);
fail_memory:
    fab_memory_destroy(memory);
    return status;
}

/* The daemon's handle for an allocation: the model's layout with origin
 * FABRIC, the exporter's IMEX domain and the tag. */
static fab_handle_t fab__alloc_handle(const fab__daemon_t *daemon, const fab__alloc_t *alloc)
{
    fab_handle_t handle;
    fab_alloc_props_t props = fab_memory_props(alloc->memory);
    fab__handle_encode(&handle, fab_memory_uuid(alloc->memory), props.size, props.peer_access,
                       FAB_HANDLE_ORIGIN_FABRIC, daemon->domain_ids[alloc->node]);
    uint8_t tag[FAB_HANDLE_TAG_BYTES];
    fab__handle_tag(daemon, handle.bytes, tag);
    fab__handle_set_tag(&handle, tag);
    return handle;
}

static fab_status_t fab__handle_export(fab__daemon_t *daemon, fab__conn_t *conn,
                                       const fab__request_t *request, fab__reply_t *reply)
{
    fab__alloc_t *alloc = fab__ref_get(conn, request->u.region.region, NULL);
    if (alloc == NULL)
        return FAB_ERROR_INVALID_HANDLE;
    /* The model decides and counts; its own (MODEL origin) handle is
     * replaced by the daemon's. */
    fab_handle_t model_handle;
    fab_status_t status = fab_memory_export(alloc->memory, &model_handle);
    if (status != FAB_SUCCESS)
        return status;
    reply->handle = fab__alloc_handle(daemon, alloc);
    return FAB_SUCCESS;
}

/* The allocation a handle names if the handle is authentic (bytes, origin,
 * tag) and of one of this daemon's domains; *status_out says why not. */
static fab__alloc_t *fab__handle_lookup(fab__daemon_t *daemon, const fab_handle_t *handle,
                                        fab_status_t *status_out)
{
    *status_out = FAB_ERROR_INVALID_HANDLE;
    if (fab__handle_check(handle->bytes) != FAB_SUCCESS ||
        fab_handle_origin(handle) != FAB_HANDLE_ORIGIN_FABRIC)
        return NULL;
    uint8_t tag[FAB_HANDLE_TAG_BYTES];
    fab__handle_tag(daemon, handle->bytes, tag);
    if (sodium_memcmp(tag, handle->bytes + FAB__HANDLE_OFF_TAG, sizeof(tag)) != 0)
        return NULL;
    *status_out = FAB_SUCCESS;
    fab_uuid_t uuid = fab_handle_uuid(handle);
    fab__alloc_t *alloc = fab__map_get(&daemon->allocs, fab__uuid_key(&uuid));
    if (alloc != NULL) {
        fab_uuid_t have = fab_memory_uuid(alloc->memory);
        if (!fab_uuid_equal(&have, &uuid))
            alloc = NULL;
    }
    return alloc;
}

static int fab__reachable(const fab__node_t *a, const fab__node_t *b)
{
    return a->info.fabric_state == FAB_FABRIC_STATE_COMPLETED &&
           b->info.fabric_state == FAB_FABRIC_STATE_COMPLETED &&
           a->info.clique_id == b->info.clique_id &&
           fab_uuid_equal(&a->info.cluster_uuid, &b->info.cluster_uuid);
}

static fab_status_t fab__handle_import(fab__daemon_t *daemon, fab__conn_t *conn,
                                       const fab__request_t *request, fab__reply_t *reply,
                                       int *fd_out, int *fd_owned)
{
    const fab_topology_t *topology = daemon->topology;
    int device = request->u.import.device;
    const fab_handle_t *handle = &request->u.import.handle;
    if (device < 0 || device >= topology->nodes[conn->node].info.device_count)
        return FAB_ERROR_INVALID_DEVICE;
    fab_status_t status;
    fab__alloc_t *alloc = fab__handle_lookup(daemon, handle, &status);
    if (status != FAB_SUCCESS)
        return status;
    if (fab_handle_domain(handle) != daemon->domain_ids[conn->node] || alloc == NULL)
        return FAB_ERROR_INVALID_HANDLE;
    if ((conn->channels & alloc->channels) == 0)
        return FAB_ERROR_NOT_PERMITTED;
    fab_importer_t *importer;
    status = fab_importer_create(device, &importer);
    if (status != FAB_SUCCESS)
        return status;
    fab_importer_set_reachable(importer, fab__reachable(&topology->nodes[alloc->node],
                                                        &topology->nodes[conn->node]));
    fab_import_t import;
    status = fab_importer_import(importer, handle, &import);
    fab_importer_destroy(importer);
    if (status != FAB_SUCCESS)
        return status;
    int fd = alloc->fd;
    int owned = 0;
    if (fab_import_access(&import) != FAB_ACCESS_READ_WRITE) {
        /* A read-only open of the same memory: the importer cannot map it
         * writable, whatever it tries. */
        char path[64];
        snprintf(path, sizeof(path), "/proc/self/fd/%d", alloc->fd);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return FAB_ERROR_OUT_OF_MEMORY;
        owned = 1;
    }
    uint64_t id;
    status = fab__ref_add(conn, alloc, 0, &id);
    if (status != FAB_SUCCESS) {
        if (owned)
            close(fd);
        return status;
    }
    if (fab_memory_export_count(alloc->memory) != 0)
        (void)fab_memory_retire_export(alloc->memory);
    reply->region = id;
    reply->uuid = fab_import_uuid(&import);
    reply->size = fab_import_size(&import);
    reply->access = (uint8_t)fab_import_access(&import);
    reply->node = device;
    *fd_out = fd;
    *fd_owned = owned;
    return FAB_SUCCESS;
}

static fab_status_t fab__handle_release(fab__daemon_t *daemon, fab__conn_t *conn,
                                        const fab__request_t *request, fab__reply_t *reply)
{
    int creator;
    fab__alloc_t *alloc = fab__ref_get(conn, request->u.region.region, &creator);
    if (alloc == NULL)
        return FAB_ERROR_INVALID_HANDLE;
    fab__map_remove(&conn->refs, request->u.region.region);
    reply->uuid = fab_memory_uuid(alloc->memory);
    uint32_t pending = fab_memory_export_count(alloc->memory);
    if (creator && pending != 0) {
        /* The model refuses this release; the driver allows it. Say so. */
        char hex[33];
        fab__uuid_hex(&reply->uuid, hex);
        fab__log(FAB__LOG_WARN, "allocation %s released by pid %ld with %u exported handles "
                 "never imported", hex, (long)conn->pid, pending);
        reply->count = pending;
    }
    fab__alloc_unref(daemon, alloc);
    return FAB_SUCCESS;
}

/* A client hands back memory it held when the previous daemon went away. */
static fab_status_t fab__handle_adopt(fab__daemon_t *daemon, fab__conn_t *conn,
                                      const fab__request_t *request, int *fd_in,
                                      fab__reply_t *reply)
{
    int fd = *fd_in;
    const fab_handle_t *handle = &request->u.import.handle;
    const fab__node_t *node = &daemon->topology->nodes[conn->node];
    int device = request->u.import.device;
    struct stat st, have;
    if (fd < 0)
        return FAB_ERROR_INVALID_VALUE;
    if (device < 0 || device >= node->info.device_count)
        return FAB_ERROR_INVALID_DEVICE;
    fab_status_t status;
    fab__alloc_t *alloc = fab__handle_lookup(daemon, handle, &status);
    if (status != FAB_SUCCESS)
        return status;
    uint64_t size = fab_handle_size(handle);
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < size)
        return FAB_ERROR_INVALID_VALUE;
    int creator = request->u.import.creator;
    if (alloc != NULL) {
        /* Already adopted (by its creator, or another holder): the fd must
         * be the same memory. */
        if (fstat(alloc->fd, &have) != 0 || have.st_dev != st.st_dev || have.st_ino != st.st_ino)
            return FAB_ERROR_INVALID_HANDLE;
        uint64_t id;
        status = fab__ref_add(conn, alloc, creator, &id);
        if (status != FAB_SUCCESS)
            return status;
        reply->region = id;
    } else {
        /* Only the creator brings memory back: an importer's fd may be
         * read-only, and a peer must not substitute memory of its own. */
        if (!creator)
            return FAB_ERROR_NOT_FOUND;
        if (fab_handle_domain(handle) != daemon->domain_ids[conn->node] ||
            (fcntl(fd, F_GETFL) & O_ACCMODE) != O_RDWR)
            return FAB_ERROR_INVALID_HANDLE;
        if (conn->channels == 0)
            return FAB_ERROR_NOT_PERMITTED;
        fab_alloc_props_t props = {
            .device_ordinal = device,
            .size = (size_t)size,
            .peer_access = fab_handle_access(handle),
            .handle_type = (fab_handle_type_t)request->u.import.handle_type,
        };
        uint64_t *used = &daemon->used[daemon->device_base[conn->node] + device];
        if (props.size > node->device.total_memory - *used)
            return FAB_ERROR_OUT_OF_MEMORY;
        fab_uuid_t uuid = fab_handle_uuid(handle);
        uint64_t key = fab__uuid_key(&uuid);
        fab_memory_t *memory;
        status = fab_memory_allocate(key, uuid, &props, &memory);
        if (status != FAB_SUCCESS)
            return status;
        alloc = calloc(1, sizeof(*alloc));
        if (alloc == NULL || key == 0 || fab__map_get(&daemon->allocs, key) != NULL ||
            fab__map_put(&daemon->allocs, key, alloc) != 0) {
            free(alloc);
            fab_memory_destroy(memory);
            return key == 0 ? FAB_ERROR_INVALID_HANDLE : FAB_ERROR_OUT_OF_MEMORY;
        }
        alloc->memory = memory;
        alloc->channels = conn->channels;
        alloc->key = key;
        alloc->fd = fd;
        alloc->node = (uint16_t)conn->node;
        uint64_t id;
        if (fab__ref_add(conn, alloc, 1, &id) != FAB_SUCCESS) {
            fab__map_remove(&daemon->allocs, key);
            fab_memory_destroy(memory);
            free(alloc);
            return FAB_ERROR_OUT_OF_MEMORY;
        }
        *used += props.size;
        daemon->bytes += props.size;
        *fd_in = -1; /* kept */
        reply->region = id;
    }
    reply->uuid = fab_memory_uuid(alloc->memory);
    reply->size = fab_memory_props(alloc->memory).size;
    reply->access = (uint8_t)fab_handle_access(handle);
    reply->node = device;
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

void fab__daemon_handle(fab__daemon_t *daemon, fab__conn_t *conn, const fab__request_t *request,
                        int fd_in, fab__reply_t *reply, int *fd_out, int *fd_owned)
{
    memset(reply, 0, sizeof(*reply));
    reply->type = request->type;
    reply->seq = request->seq;
    *fd_out = -1;
    *fd_owned = 0;
    fab_status_t status;
    if (request->type != FAB__MSG_HELLO && conn->node < 0) {
        if (fd_in >= 0)
            close(fd_in);
        reply->status = FAB_ERROR_ILLEGAL_STATE; /* out of order: hello first */
        return;
    }
    if (request->type == FAB__MSG_ADOPT) {
        reply->status = (uint32_t)fab__handle_adopt(daemon, conn, request, &fd_in, reply);
        if (fd_in >= 0)
            close(fd_in);
        return;
    }
    if (fd_in >= 0)
        close(fd_in); /* nothing else takes one */
    switch (request->type) {
    case FAB__MSG_HELLO:
        status = fab__handle_hello(daemon, conn, request, reply);
        break;
    case FAB__MSG_ALLOC:
        status = fab__handle_alloc(daemon, conn, request, reply, fd_out);
        break;
    case FAB__MSG_EXPORT:
        status = fab__handle_export(daemon, conn, request, reply);
        break;
    case FAB__MSG_IMPORT:
        status = fab__handle_import(daemon, conn, request, reply, fd_out, fd_owned);
        break;
    case FAB__MSG_RELEASE:
        status = fab__handle_release(daemon, conn, request, reply);
        break;
    case FAB__MSG_STATS: {
        reply->stats[0] = (uint64_t)getpid();
        reply->stats[1] = daemon->nconns;
        reply->stats[2] = daemon->allocs.count;
        reply->stats[3] = 0;
        for (size_t i = 0; i < daemon->allocs.cap; i++) {
            const fab__alloc_t *a = daemon->allocs.slots[i].value;
            if (daemon->allocs.slots[i].key != 0)
                reply->stats[3] += a->refs;
        }
        reply->stats[4] = daemon->bytes;
        reply->stats[5] = (uint64_t)fab__rss_bytes();
        status = FAB_SUCCESS;
        break;
    }
    case FAB__MSG_VERIFY: {
        fab__alloc_t *alloc = fab__handle_lookup(daemon, &request->u.import.handle, &status);
        if (status == FAB_SUCCESS) {
            uint64_t domain = fab_handle_domain(&request->u.import.handle);
            status = FAB_ERROR_INVALID_HANDLE;
            for (int i = 0; i < daemon->topology->nnodes; i++) {
                if (daemon->domain_ids[i] == domain)
                    status = FAB_SUCCESS;
            }
            reply->access = alloc != NULL;
        }
        break;
    }
    default:
        status = FAB_ERROR_INVALID_VALUE;
        break;
    }
    reply->status = (uint32_t)status;
}
