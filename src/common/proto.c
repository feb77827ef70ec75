/* The client-daemon wire protocol's codec (see proto.h): the message list's
 * rows, and the encoders and decoders of requests and replies. Decoding
 * checks every length and field before anything is stored, so a hostile
 * peer can only earn an error. Carrying messages over the socket is
 * transport.c's. */
#include "src/common/proto.h"

#include "src/base/hot.h"
#include "src/base/le.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static void fab__header_put(uint8_t *buf, uint16_t type, uint32_t seq, uint32_t status)
{
    fab__le_put32(buf, FAB__PROTO_MAGIC);
    fab__le_put16(buf + 4, type);
    fab__le_put16(buf + 6, 0);
    fab__le_put32(buf + 8, seq);
    fab__le_put32(buf + 12, status);
}

/* The list's rows by type number (src/common/proto.h): a number past the
 * array or given twice does not compile. */
#define FAB__MSG_ROW_(name, num, body, fds_in, fds_out, rq, rp)                               \
    [num] = {#name, (uint16_t)(body), fds_in, fds_out, FAB__RQ_##rq, FAB__RP_##rp},
const fab__msg_row_t fab__msgs[FAB__MSG_TYPE_MAX + 1] = {FAB__MSG_LIST(FAB__MSG_ROW_)};
#undef FAB__MSG_ROW_

/* Body lengths of requests, by type (HELLO's and IMPORT_MANY's vary: their
 * fixed part). */
static size_t fab__request_body_len(uint16_t type)
{
    return fab__msg(type)->request_body;
}

FAB__HOT
size_t fab__request_encode(const fab__request_t *request, uint8_t *buf)
{
    uint8_t *b = buf + FAB__PROTO_HEADER;
    size_t len = fab__request_body_len(request->type);
    fab__header_put(buf, request->type, request->seq, 0);
    switch (fab__msg(request->type)->request_layout) {
    case FAB__RQ_HELLO:
        fab__le_put32(b, request->u.hello.version);
        b[4] = request->u.hello.name_len;
        memcpy(b + 5, request->u.hello.name, request->u.hello.name_len);
        len += request->u.hello.name_len;
        break;
    case FAB__RQ_ALLOC:
        fab__le_put32(b, (uint32_t)request->u.alloc.device);
        fab__le_put64(b + 4, request->u.alloc.size);
        b[12] = request->u.alloc.peer_access;
        fab__le_put32(b + 13, request->u.alloc.handle_type);
        break;
    case FAB__RQ_REGION:
        fab__le_put64(b, request->u.region.region);
        break;
    case FAB__RQ_IMPORT:
        fab__le_put32(b, (uint32_t)request->u.import.device);
        memcpy(b + 4, request->u.import.handle.bytes, FAB_HANDLE_BYTES);
        break;
    case FAB__RQ_VERIFY:
        memcpy(b, request->u.import.handle.bytes, FAB_HANDLE_BYTES);
        break;
    case FAB__RQ_ADOPT:
        fab__le_put32(b, (uint32_t)request->u.import.device);
        fab__le_put32(b + 4, request->u.import.handle_type);
        b[8] = request->u.import.creator;
        memcpy(b + 9, request->u.import.handle.bytes, FAB_HANDLE_BYTES);
        memcpy(b + 9 + FAB_HANDLE_BYTES, request->u.import.token, FAB__TOKEN_BYTES);
        break;
    case FAB__RQ_TOPOLOGY:
        fab__le_put32(b, request->u.topology.node);
        break;
    case FAB__RQ_IPC_PUBLISH:
        b[0] = request->u.ipc_publish.kind;
        fab__le_put32(b + 1, (uint32_t)request->u.ipc_publish.device);
        fab__le_put64(b + 5, request->u.ipc_publish.size);
        break;
    case FAB__RQ_IPC_HANDLE:
        memcpy(b, request->u.ipc.bytes, FAB__IPC_HANDLE_BYTES);
        break;
    case FAB__RQ_FAULT:
        b[0] = request->u.fault.op;
        b[1] = request->u.fault.key;
        fab__le_put32(b + 2, request->u.fault.target);
        fab__le_put32(b + 6, (uint32_t)request->u.fault.value);
        break;
    case FAB__RQ_IMPORT_MANY: {
        /* At most FAB__IMPORT_MANY_MAX: the caller's to keep. */
        unsigned count = request->u.import_many.count <= FAB__IMPORT_MANY_MAX
                             ? request->u.import_many.count
                             : 0;
        fab__le_put32(b, (uint32_t)request->u.import_many.device);
        b[4] = (uint8_t)count;
        for (unsigned i = 0; i < count; i++)
            memcpy(b + 5 + (size_t)FAB_HANDLE_BYTES * i, request->handles[i].bytes,
                   FAB_HANDLE_BYTES);
        len += (size_t)FAB_HANDLE_BYTES * count;
        break;
    }
    case FAB__RQ_MC:
        fab__le_put64(b, request->u.mc.id);
        fab__le_put32(b + 8, (uint32_t)request->u.mc.device);
        fab__le_put32(b + 12, request->u.mc.count);
        fab__le_put32(b + 16, request->u.mc.types);
        fab__le_put64(b + 20, request->u.mc.size);
        fab__le_put64(b + 28, request->u.mc.mc_offset);
        fab__le_put64(b + 36, request->u.mc.mem_offset);
        break;
    default:
        break;
    }
    /* The released ids ride after the body (at most FAB__PROTO_RELEASES_MAX:
     * the caller's to keep). */
    unsigned n = request->nreleases <= FAB__PROTO_RELEASES_MAX ? request->nreleases : 0;
    buf[6] = (uint8_t)n;
    buf[7] = request->flags;
    for (unsigned i = 0; i < n; i++)
        fab__le_put64(b + len + 8 * i, request->releases[i]);
    return FAB__PROTO_HEADER + len + 8 * n;
}

FAB__HOT
fab_status_t fab__request_decode(const uint8_t *buf, size_t len, fab__request_t *out)
{
    if (buf == NULL || out == NULL || len < FAB__PROTO_HEADER || len > FAB__PROTO_MAX)
        return FAB_ERROR_INVALID_VALUE;
    if (fab__le_get32(buf) != FAB__PROTO_MAGIC || fab__le_get32(buf + 12) != 0)
        return FAB_ERROR_INVALID_VALUE;
    uint16_t type = fab__le_get16(buf + 4);
    uint8_t nreleases = buf[6], flags = buf[7];
    if (type == 0 || type > FAB__MSG_TYPE_MAX || nreleases > FAB__PROTO_RELEASES_MAX ||
        (flags & ~FAB__REQUEST_WAITS) != 0 ||
        len - FAB__PROTO_HEADER < (size_t)nreleases * 8)
        return FAB_ERROR_INVALID_VALUE;
    const uint8_t *b = buf + FAB__PROTO_HEADER;
    size_t body = len - FAB__PROTO_HEADER - (size_t)nreleases * 8;
    size_t want = fab__request_body_len(type);
    /* In place: the header, the released ids (only nreleases of them are
     * read) and the type's member of the union, zeroed first so that what
     * the body does not say is 0. No copy through the stack: the daemon
     * decodes every request. */
    fab__request_t *r = out;
    r->type = type;
    r->seq = fab__le_get32(buf + 8);
    r->flags = flags;
    r->nreleases = nreleases;
    for (size_t i = 0; i < nreleases; i++) {
        r->releases[i] = fab__le_get64(b + body + 8 * i);
        if (r->releases[i] == 0)
            return FAB_ERROR_INVALID_VALUE; /* no reference has id 0 */
    }
    /* IMPORT's member alone (the whole union is HELLO's 264-byte name), and
     * of it what the body does not fill: ADOPT's fields. */
    uint8_t layout = fab__msg(type)->request_layout;
    if (layout == FAB__RQ_IMPORT) {
        r->u.import.handle_type = 0;
        r->u.import.creator = 0;
        memset(r->u.import.token, 0, FAB__TOKEN_BYTES);
    } else
        memset(&r->u, 0, sizeof(r->u));
    switch (layout) {
    case FAB__RQ_HELLO:
        if (body < want || body != want + b[4])
            return FAB_ERROR_INVALID_VALUE;
        r->u.hello.version = fab__le_get32(b);
        r->u.hello.name_len = b[4];
        memcpy(r->u.hello.name, b + 5, b[4]);
        /* A name is text: no NUL inside, which would make two names equal. */
        if (memchr(r->u.hello.name, '\0', r->u.hello.name_len) != NULL)
            return FAB_ERROR_INVALID_VALUE;
        break;
    case FAB__RQ_ALLOC:
        if (body != want)
            return FAB_ERROR_INVALID_VALUE;
        r->u.alloc.device = (int32_t)fab__le_get32(b);
        r->u.alloc.size = fab__le_get64(b + 4);
        r->u.alloc.peer_access = b[12];
        r->u.alloc.handle_type = fab__le_get32(b + 13);
        if (r->u.alloc.peer_access > FAB_ACCESS_READ_WRITE)
            return FAB_ERROR_INVALID_VALUE;
        break;
    case FAB__RQ_REGION:
        if (body != want)
            return FAB_ERROR_INVALID_VALUE;
        r->u.region.region = fab__le_get64(b);
        break;
    case FAB__RQ_IMPORT:
        if (body != want)
            return FAB_ERROR_INVALID_VALUE;
        r->u.import.device = (int32_t)fab__le_get32(b);
        memcpy(r->u.import.handle.bytes, b + 4, FAB_HANDLE_BYTES);
        break;
    case FAB__RQ_EMPTY:
        if (body != want)
            return FAB_ERROR_INVALID_VALUE;
        break;
    case FAB__RQ_VERIFY:
        if (body != want)
            return FAB_ERROR_INVALID_VALUE;
        memcpy(r->u.import.handle.bytes, b, FAB_HANDLE_BYTES);
        break;
    case FAB__RQ_ADOPT:
        if (body != want || b[8] > 1)
            return FAB_ERROR_INVALID_VALUE;
        r->u.import.device = (int32_t)fab__le_get32(b);
        r->u.import.handle_type = fab__le_get32(b + 4);
        r->u.import.creator = b[8];
        memcpy(r->u.import.handle.bytes, b + 9, FAB_HANDLE_BYTES);
        memcpy(r->u.import.token, b + 9 + FAB_HANDLE_BYTES, FAB__TOKEN_BYTES);
        break;
    case FAB__RQ_TOPOLOGY:
        if (body != want)
            return FAB_ERROR_INVALID_VALUE;
        r->u.topology.node = fab__le_get32(b);
        break;
    case FAB__RQ_IPC_PUBLISH:
        if (body != want || (b[0] != FAB__IPC_KIND_MEM && b[0] != FAB__IPC_KIND_EVENT))
            return FAB_ERROR_INVALID_VALUE;
        r->u.ipc_publish.kind = b[0];
        r->u.ipc_publish.device = (int32_t)fab__le_get32(b + 1);
        r->u.ipc_publish.size = fab__le_get64(b + 5);
        break;
    case FAB__RQ_IPC_HANDLE:
        if (body != want)
            return FAB_ERROR_INVALID_VALUE;
        memcpy(r->u.ipc.bytes, b, FAB__IPC_HANDLE_BYTES);
        break;
    case FAB__RQ_FAULT:
        /* The shape only; which node, channel and value make sense is the
         * daemon's question (an error reply, not a closed connection). */
        if (body != want || b[0] < FAB__FAULT_OP_SET || b[0] > FAB__FAULT_OP_RESET ||
            b[1] > FAB__FAULT_KEY_MAX)
            return FAB_ERROR_INVALID_VALUE;
        r->u.fault.op = b[0];
        r->u.fault.key = b[1];
        r->u.fault.target = fab__le_get32(b + 2);
        r->u.fault.value = (int32_t)fab__le_get32(b + 6);
        break;
    case FAB__RQ_IMPORT_MANY:
        /* A count of 0 or past the most, or handle bytes that are not
         * exactly count handles, is malformed. */
        if (body < want || b[4] == 0 || b[4] > FAB__IMPORT_MANY_MAX ||
            body != want + (size_t)FAB_HANDLE_BYTES * b[4])
            return FAB_ERROR_INVALID_VALUE;
        r->u.import_many.device = (int32_t)fab__le_get32(b);
        r->u.import_many.count = b[4];
        break;
    case FAB__RQ_MC:
        /* The shape only: which team, device and ranges make sense is the
         * daemon's question (an error reply). */
        if (body != want)
            return FAB_ERROR_INVALID_VALUE;
        r->u.mc.id = fab__le_get64(b);
        r->u.mc.device = (int32_t)fab__le_get32(b + 8);
        r->u.mc.count = fab__le_get32(b + 12);
        r->u.mc.types = fab__le_get32(b + 16);
        r->u.mc.size = fab__le_get64(b + 20);
        r->u.mc.mc_offset = fab__le_get64(b + 28);
        r->u.mc.mem_offset = fab__le_get64(b + 36);
        break;
    default:
        return FAB_ERROR_INVALID_VALUE;
    }
    if (type == FAB__MSG_IMPORT_MANY)
        memcpy(out->handles, b + 5, (size_t)FAB_HANDLE_BYTES * r->u.import_many.count);
    return FAB_SUCCESS;
}

/* A TOPOLOGY reply's node record, after the common body: each name as a
 * length byte and its bytes (no NUL), then the fixed fields. */
static size_t fab__put_name(uint8_t *p, const char *name)
{
    size_t n = strnlen(name, FAB_NAME_MAX - 1);
    p[0] = (uint8_t)n;
    memcpy(p + 1, name, n);
    return 1 + n;
}

static size_t fab__node_encode(const fab__node_t *node, uint8_t *p)
{
    size_t at = fab__put_name(p, node->info.name);
    at += fab__put_name(p + at, node->info.imex_domain);
    memcpy(p + at, node->info.cluster_uuid.bytes, 16);
    fab__le_put32(p + at + 16, node->info.clique_id);
    p[at + 20] = (uint8_t)node->info.fabric_state;
    fab__le_put32(p + at + 21, (uint32_t)node->info.device_count);
    at += 25;
    at += fab__put_name(p + at, node->device.name);
    fab__le_put64(p + at, node->device.total_memory);
    fab__le_put64(p + at + 8, node->device.granularity);
    fab__le_put32(p + at + 16, node->device.handle_types);
    fab__le_put32(p + at + 20, (uint32_t)node->device.compute_major);
    fab__le_put32(p + at + 24, (uint32_t)node->device.compute_minor);
    fab__le_put32(p + at + 28, (uint32_t)node->device.sm_count);
    at += 32;
    fab__le_put32(p + at, node->info.fabric_status);
    fab__le_put32(p + at + 4, node->info.fabric_health);
    at += 8;
    /* The serial's array holds 16 bytes and a NUL: never read past it. */
    size_t serial = strnlen(node->info.chassis_serial, FAB_CHASSIS_SERIAL_MAX);
    p[at] = (uint8_t)serial;
    memcpy(p + at + 1, node->info.chassis_serial, serial);
    at += 1 + serial;
    p[at] = node->info.slot_number;
    p[at + 1] = node->info.tray_index;
    p[at + 2] = node->info.host_id;
    fab__le_put32(p + at + 3, node->device.pci_domain);
    fab__le_put32(p + at + 7, node->device.pci_device_id);
    at += 11;
    /* Host NUMA nodes and the bytes of each. */
    fab__le_put32(p + at, (uint32_t)node->info.host_numa_nodes);
    fab__le_put64(p + at + 4, node->info.host_memory);
    at += 12;
    /* The attribute overrides: a count, then (u32 id, i32 value) each. */
    p[at] = node->nattributes;
    for (unsigned i = 0; i < node->nattributes; i++) {
        fab__le_put32(p + at + 1 + 8 * i, node->attributes[i].id);
        fab__le_put32(p + at + 5 + 8 * i, (uint32_t)node->attributes[i].value);
    }
    return at + 1 + 8 * (size_t)node->nattributes;
}

/* Read a name; 0 when it does not fit in len. */
static size_t fab__get_name(const uint8_t *p, size_t len, char *name)
{
    if (len < 1 || len < 1 + (size_t)p[0] || memchr(p + 1, '\0', p[0]) != NULL)
        return 0;
    memcpy(name, p + 1, p[0]);
    name[p[0]] = '\0';
    return 1 + (size_t)p[0];
}

static fab_status_t fab__node_decode(const uint8_t *p, size_t len, fab__node_t *node)
{
    memset(node, 0, sizeof(*node));
    size_t a = fab__get_name(p, len, node->info.name);
    size_t b = a ? fab__get_name(p + a, len - a, node->info.imex_domain) : 0;
    size_t at = a + b;
    if (a == 0 || b == 0 || len - at < 25)
        return FAB_ERROR_INVALID_VALUE;
    memcpy(node->info.cluster_uuid.bytes, p + at, 16);
    node->info.clique_id = fab__le_get32(p + at + 16);
    if (p[at + 20] > FAB_FABRIC_STATE_COMPLETED)
        return FAB_ERROR_INVALID_VALUE;
    node->info.fabric_state = (fab_fabric_state_t)p[at + 20];
    node->info.device_count = (int)fab__le_get32(p + at + 21);
    at += 25;
    size_t c = fab__get_name(p + at, len - at, node->device.name);
    at += c;
    if (c == 0 || len - at < 32 + 8 || node->info.device_count < 0)
        return FAB_ERROR_INVALID_VALUE;
    node->device.total_memory = fab__le_get64(p + at);
    node->device.granularity = fab__le_get64(p + at + 8);
    node->device.handle_types = fab__le_get32(p + at + 16);
    node->device.compute_major = (int)fab__le_get32(p + at + 20);
    node->device.compute_minor = (int)fab__le_get32(p + at + 24);
    node->device.sm_count = (int)fab__le_get32(p + at + 28);
    at += 32;
    node->info.fabric_status = fab__le_get32(p + at);
    node->info.fabric_health = fab__le_get32(p + at + 4);
    at += 8;
    char serial[FAB_NAME_MAX];
    size_t d = fab__get_name(p + at, len - at, serial);
    at += d;
    if (d == 0 || d - 1 > FAB_CHASSIS_SERIAL_MAX || len - at < 12)
        return FAB_ERROR_INVALID_VALUE;
    memcpy(node->info.chassis_serial, serial, d);
    node->info.slot_number = p[at];
    node->info.tray_index = p[at + 1];
    node->info.host_id = p[at + 2];
    node->device.pci_domain = fab__le_get32(p + at + 3);
    node->device.pci_device_id = fab__le_get32(p + at + 7);
    at += 11;
    if (len - at < 12 + 1)
        return FAB_ERROR_INVALID_VALUE;
    uint32_t numa = fab__le_get32(p + at);
    if (numa == 0 || numa > FAB__HOST_NUMA_MAX)
        return FAB_ERROR_INVALID_VALUE;
    node->info.host_numa_nodes = (int)numa;
    node->info.host_memory = fab__le_get64(p + at + 4);
    at += 12;
    unsigned n = p[at];
    if (n > FAB__NODE_ATTRIBUTES_MAX || len - at != 1 + 8 * (size_t)n)
        return FAB_ERROR_INVALID_VALUE;
    node->nattributes = (uint8_t)n;
    for (unsigned i = 0; i < n; i++) {
        node->attributes[i].id = fab__le_get32(p + at + 1 + 8 * i);
        node->attributes[i].value = (int32_t)fab__le_get32(p + at + 5 + 8 * i);
    }
    return FAB_SUCCESS;
}

static size_t fab__memory_encode(const fab__reply_memory_t *m, uint8_t *b)
{
    fab__le_put64(b, m->region);
    memcpy(b + 8, m->uuid.bytes, 16);
    fab__le_put64(b + 24, m->size);
    b[32] = m->access;
    fab__le_put32(b + 33, (uint32_t)m->device);
    return 37;
}

static void fab__memory_decode(const uint8_t *b, fab__reply_memory_t *m)
{
    m->region = fab__le_get64(b);
    memcpy(m->uuid.bytes, b + 8, 16);
    m->size = fab__le_get64(b + 24);
    m->access = b[32];
    m->device = (int32_t)fab__le_get32(b + 33);
}

/* Reply bodies by type, on success (an error reply has none):
 *   HELLO     i32 node, u32 driver version
 *   ALLOC     memory (u64 region, 16 uuid, u64 size, u8 access, i32 device),
 *             64 handle bytes, 16 token bytes
 *   EXPORT    64 handle bytes
 *   IMPORT    memory, then (version 7) u8 kind     ADOPT  memory
 *   RELEASE   16 uuid, u32 exports never imported
 *   STATS     six u64: pid, clients, allocations, references, bytes, rss
 *   VERIFY    u8 live
 *   TOPOLOGY  u32 node count, u32 driver version, the node record (its
 *             fabric status and health, chassis serial, slot, tray, host id,
 *             PCI domain and device id, host NUMA nodes and host memory, then
 *             the attribute overrides)
 *   IPC_PUBLISH   64 IPC handle bytes
 *   IPC_OPEN      u8 kind, i32 device, u64 size (+ the memfd)
 *   IPC_WITHDRAW  empty
 *   FAULT     empty
 *   IMPORT_MANY   u8 count, then per handle u32 status and, where it is 0
 *             (success), memory; one fd per successful entry, in order
 *   MC_*      u64 id, u64 size, u64 granularity, u32 devices, u32 handle
 *             types, i32 creator node, u32 shadow pages (MC_JOIN fills them,
 *             + the staging and shadow memfds; MC_BIND the id; the rest
 *             zeros) */
FAB__HOT
size_t fab__reply_encode(const fab__reply_t *reply, uint8_t *buf)
{
    uint8_t *b = buf + FAB__PROTO_HEADER;
    size_t n = 0;
    fab__header_put(buf, (uint16_t)(reply->type | FAB__MSG_REPLY), reply->seq, reply->status);
    if (reply->status != FAB_SUCCESS)
        return FAB__PROTO_HEADER;
    switch (fab__msg(reply->type)->reply_layout) {
    case FAB__RP_HELLO:
        fab__le_put32(b, (uint32_t)reply->u.hello.node);
        fab__le_put32(b + 4, reply->u.hello.driver_version);
        n = 8;
        break;
    case FAB__RP_ALLOC:
        n = fab__memory_encode(&reply->u.alloc.memory, b);
        memcpy(b + n, reply->u.alloc.handle.bytes, FAB_HANDLE_BYTES);
        memcpy(b + n + FAB_HANDLE_BYTES, reply->u.alloc.token, FAB__TOKEN_BYTES);
        n += FAB_HANDLE_BYTES + FAB__TOKEN_BYTES;
        break;
    case FAB__RP_HANDLE:
        memcpy(b, reply->u.exported.handle.bytes, FAB_HANDLE_BYTES);
        n = FAB_HANDLE_BYTES;
        break;
    case FAB__RP_MEMORY:
        n = fab__memory_encode(&reply->u.import, b);
        if (reply->type == FAB__MSG_IMPORT && reply->u.import.kind != FAB__MEMORY_UNSAID)
            b[n++] = reply->u.import.kind;
        break;
    case FAB__RP_RELEASE:
        memcpy(b, reply->u.release.uuid.bytes, 16);
        fab__le_put32(b + 16, reply->u.release.unimported);
        n = 20;
        break;
    case FAB__RP_STATS: {
        const fab__stats_t *st = &reply->u.stats;
        const uint64_t v[6] = {st->pid, st->clients, st->allocations, st->references, st->bytes,
                               st->rss};
        for (int i = 0; i < 6; i++)
            fab__le_put64(b + 8 * i, v[i]);
        n = 48;
        break;
    }
    case FAB__RP_VERIFY:
        b[0] = reply->u.verify.live;
        n = 1;
        break;
    case FAB__RP_TOPOLOGY:
        fab__le_put32(b, reply->u.topology.node_count);
        fab__le_put32(b + 4, reply->u.topology.driver_version);
        n = 8 + fab__node_encode(&reply->u.topology.node, b + 8);
        break;
    case FAB__RP_IPC_HANDLE:
        memcpy(b, reply->u.ipc_publish.bytes, FAB__IPC_HANDLE_BYTES);
        n = FAB__IPC_HANDLE_BYTES;
        break;
    case FAB__RP_IPC_OPEN:
        b[0] = reply->u.ipc_open.kind;
        fab__le_put32(b + 1, (uint32_t)reply->u.ipc_open.device);
        fab__le_put64(b + 5, reply->u.ipc_open.size);
        n = 13;
        break;
    case FAB__RP_IMPORT_MANY: {
        unsigned count = reply->u.import_many.count <= FAB__IMPORT_MANY_MAX
                             ? reply->u.import_many.count
                             : 0;
        b[0] = (uint8_t)count;
        n = 1;
        for (unsigned i = 0; i < count; i++) {
            uint32_t status = reply->u.import_many.entries[i].status;
            fab__le_put32(b + n, status);
            n += 4;
            if (status == FAB_SUCCESS)
                n += fab__memory_encode(&reply->u.import_many.entries[i].memory, b + n);
        }
        break;
    }
    case FAB__RP_MC:
        fab__le_put64(b, reply->u.mc.id);
        fab__le_put64(b + 8, reply->u.mc.size);
        fab__le_put64(b + 16, reply->u.mc.granularity);
        fab__le_put32(b + 24, reply->u.mc.num_devices);
        fab__le_put32(b + 28, reply->u.mc.handle_types);
        fab__le_put32(b + 32, (uint32_t)reply->u.mc.creator_node);
        fab__le_put32(b + 36, reply->u.mc.shadow_pages);
        n = FAB__MC_REPLY;
        break;
    default:
        break;
    }
    return FAB__PROTO_HEADER + n;
}

/* The bytes of a decoded reply its layout fills: the header fields and the
 * layout's member of the union (a TOPOLOGY reply's node record alone is
 * 1,176 of the 1,200): clearing and copying only those is what keeps an
 * IMPORT reply's decode at 72 bytes. An unknown layout (an error reply of
 * a type the list lacks) takes the whole union. */
#define FAB__RP_BYTES_(layout, member)                                                      \
    [FAB__RP_##layout] = offsetof(fab__reply_t, u) + sizeof(((fab__reply_t *)0)->u.member)
static const uint16_t fab__reply_bytes[] = {
    [FAB__RP_NONE] = sizeof(fab__reply_t),
    FAB__RP_BYTES_(HELLO, hello),
    FAB__RP_BYTES_(ALLOC, alloc),
    FAB__RP_BYTES_(HANDLE, exported),
    FAB__RP_BYTES_(MEMORY, import),
    FAB__RP_BYTES_(RELEASE, release),
    FAB__RP_BYTES_(STATS, stats),
    FAB__RP_BYTES_(VERIFY, verify),
    FAB__RP_BYTES_(TOPOLOGY, topology),
    FAB__RP_BYTES_(IPC_HANDLE, ipc_publish),
    FAB__RP_BYTES_(IPC_OPEN, ipc_open),
    [FAB__RP_EMPTY] = offsetof(fab__reply_t, u),
    FAB__RP_BYTES_(IMPORT_MANY, import_many),
    FAB__RP_BYTES_(MC, mc),
};
#undef FAB__RP_BYTES_
_Static_assert(sizeof(fab__reply_bytes) / sizeof(fab__reply_bytes[0]) == FAB__RP_MC + 1,
               "every reply layout has its size");

FAB__HOT
fab_status_t fab__reply_decode(const uint8_t *buf, size_t len, fab__reply_t *out)
{
    if (buf == NULL || out == NULL || len < FAB__PROTO_HEADER || len > FAB__PROTO_MAX)
        return FAB_ERROR_INVALID_VALUE;
    uint16_t type = fab__le_get16(buf + 4);
    if (fab__le_get32(buf) != FAB__PROTO_MAGIC || (type & FAB__MSG_REPLY) == 0 ||
        fab__le_get16(buf + 6) != 0)
        return FAB_ERROR_INVALID_VALUE;
    fab__reply_t *r = out; /* decoded in place: written on failure too */
    uint16_t rtype = (uint16_t)(type & ~FAB__MSG_REPLY);
    size_t filled = fab__reply_bytes[fab__msg(rtype)->reply_layout];
    memset(r, 0, filled);
    r->type = rtype;
    r->seq = fab__le_get32(buf + 8);
    r->status = fab__le_get32(buf + 12);
    const uint8_t *b = buf + FAB__PROTO_HEADER;
    size_t body = len - FAB__PROTO_HEADER;
    size_t want = 0;
    if (r->status != FAB_SUCCESS) {
        want = 0;
    } else {
        switch (fab__msg(r->type)->reply_layout) {
        case FAB__RP_HELLO:
            want = 8;
            if (body == want) {
                r->u.hello.node = (int32_t)fab__le_get32(b);
                r->u.hello.driver_version = fab__le_get32(b + 4);
            }
            break;
        case FAB__RP_ALLOC:
            want = 37 + FAB_HANDLE_BYTES + FAB__TOKEN_BYTES;
            if (body == want) {
                fab__memory_decode(b, &r->u.alloc.memory);
                memcpy(r->u.alloc.handle.bytes, b + 37, FAB_HANDLE_BYTES);
                memcpy(r->u.alloc.token, b + 37 + FAB_HANDLE_BYTES, FAB__TOKEN_BYTES);
            }
            break;
        case FAB__RP_HANDLE:
            want = FAB_HANDLE_BYTES;
            if (body == want)
                memcpy(r->u.exported.handle.bytes, b, FAB_HANDLE_BYTES);
            break;
        case FAB__RP_MEMORY:
            /* A version-7 IMPORT reply says the kind; 0 is never sent. */
            want = r->type == FAB__MSG_IMPORT && body == 38 &&
                           (b[37] == FAB__MEMORY_PLAIN || b[37] == FAB__MEMORY_MC_TOKEN)
                       ? 38
                       : 37;
            if (body == want) {
                fab__memory_decode(b, &r->u.import);
                r->u.import.kind = want == 38 ? b[37] : FAB__MEMORY_UNSAID;
            }
            break;
        case FAB__RP_RELEASE:
            want = 20;
            if (body == want) {
                memcpy(r->u.release.uuid.bytes, b, 16);
                r->u.release.unimported = fab__le_get32(b + 16);
            }
            break;
        case FAB__RP_STATS:
            want = 48;
            if (body == want) {
                fab__stats_t *st = &r->u.stats;
                st->pid = fab__le_get64(b);
                st->clients = fab__le_get64(b + 8);
                st->allocations = fab__le_get64(b + 16);
                st->references = fab__le_get64(b + 24);
                st->bytes = fab__le_get64(b + 32);
                st->rss = fab__le_get64(b + 40);
            }
            break;
        case FAB__RP_VERIFY:
            want = 1;
            if (body == want)
                r->u.verify.live = b[0];
            break;
        case FAB__RP_TOPOLOGY:
            if (body < 8 ||
                fab__node_decode(b + 8, body - 8, &r->u.topology.node) != FAB_SUCCESS)
                return FAB_ERROR_INVALID_VALUE;
            r->u.topology.node_count = fab__le_get32(b);
            r->u.topology.driver_version = fab__le_get32(b + 4);
            want = body;
            break;
        case FAB__RP_IPC_HANDLE:
            want = FAB__IPC_HANDLE_BYTES;
            if (body == want)
                memcpy(r->u.ipc_publish.bytes, b, FAB__IPC_HANDLE_BYTES);
            break;
        case FAB__RP_IPC_OPEN:
            want = 13;
            if (body == want) {
                r->u.ipc_open.kind = b[0];
                r->u.ipc_open.device = (int32_t)fab__le_get32(b + 1);
                r->u.ipc_open.size = fab__le_get64(b + 5);
            }
            break;
        case FAB__RP_EMPTY:
            want = 0;
            break;
        case FAB__RP_IMPORT_MANY: {
            /* Entries of their own lengths: walk them, each within body. */
            if (body < 1 || b[0] == 0 || b[0] > FAB__IMPORT_MANY_MAX)
                return FAB_ERROR_INVALID_VALUE;
            r->u.import_many.count = b[0];
            size_t at = 1;
            for (unsigned i = 0; i < b[0]; i++) {
                if (body - at < 4)
                    return FAB_ERROR_INVALID_VALUE;
                uint32_t status = fab__le_get32(b + at);
                at += 4;
                r->u.import_many.entries[i].status = status;
                if (status != FAB_SUCCESS)
                    continue;
                if (body - at < 37)
                    return FAB_ERROR_INVALID_VALUE;
                fab__memory_decode(b + at, &r->u.import_many.entries[i].memory);
                at += 37;
            }
            want = at;
            break;
        }
        case FAB__RP_MC:
            want = FAB__MC_REPLY;
            if (body == want) {
                r->u.mc.id = fab__le_get64(b);
                r->u.mc.size = fab__le_get64(b + 8);
                r->u.mc.granularity = fab__le_get64(b + 16);
                r->u.mc.num_devices = fab__le_get32(b + 24);
                r->u.mc.handle_types = fab__le_get32(b + 28);
                r->u.mc.creator_node = (int32_t)fab__le_get32(b + 32);
                r->u.mc.shadow_pages = fab__le_get32(b + 36);
            }
            break;
        default:
            return FAB_ERROR_INVALID_VALUE;
        }
    }
    if (body != want)
        return FAB_ERROR_INVALID_VALUE;
    return FAB_SUCCESS;
}
