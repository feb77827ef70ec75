/* The daemon's state and its rules, without any socket: the registry of live
 * allocations, the clients and their references, and the function that turns
 * one decoded request into one reply. loop.c feeds it from the event loop; the
 * request fuzzer (fuzz/fuzz_request.c) feeds it directly.
 *
 * Lifecycle of an allocation: ALLOC creates it with one reference (the
 * creator's) and a memfd; IMPORT adds a reference for the importer; RELEASE,
 * or the client's disconnection, drops references; the last drop closes the
 * memfd and forgets the uuid, so the allocation's handles become stale. Pages
 * that clients still map live on in the kernel without the daemon.
 *
 * A freed allocation stays freed for the daemon's lifetime, so that nothing
 * can bring it back: its handles stay stale. Every uuid this daemon mints
 * carries its epoch (random at start, bytes 8..11), so one of its own that
 * it does not hold live was freed, and costs nothing to remember; only an
 * allocation adopted from an earlier daemon (after a restart) leaves a
 * tombstone when freed (8 to 16 bytes of a hash set at most half full),
 * so the set is bounded by what clients brought back.
 *
 * After a restart the registry is empty, but the key (state file) is the
 * same: clients ADOPT their live regions back, each with its handle and its
 * memfd. The creator proves it is one with the creator token that only its
 * ALLOC reply carried, and brings the memory back; an importer that comes
 * first is parked (its reference counts, but the handle is not live) until
 * the creator returns with the same memory.
 *
 * Legacy CUDA IPC (IPC_PUBLISH, IPC_OPEN, IPC_WITHDRAW) is a table apart:
 * an entry is a published memfd, owned by the publishing connection from
 * PUBLISH until WITHDRAW or its disconnection; an open hands out the memfd
 * and keeps nothing (the opener's mapping holds the pages). Entries are not
 * allocations: they count against no allocation limit, since the memory is the
 * publisher's own (cuMemAlloc), already made, but each keeps a descriptor
 * of the daemon's, so they count against the publisher's uid
 * (max_ipc_entries_per_uid).
 *
 * Per uid, the daemon counts connections, live allocations, their bytes and
 * references, and refuses what goes over the [daemon] limits. */
#ifndef FABMEM_DAEMON_REGISTRY_H
#define FABMEM_DAEMON_REGISTRY_H

#include <stdint.h>
#include <sys/types.h>

#include "fabmem/topology.h"
#include "fabmem/model.h"
#include "src/daemon/map.h"
#include "src/common/log.h"
#include "src/common/proto.h"

#define FAB__KEY_BYTES 32

typedef struct fab__registry fab__registry_t;

typedef struct fab__user fab__user_t;

typedef struct fab__conn {
    fab__user_t *user; /* the per-uid counters this connection is charged to */
    uid_t uid;
    gid_t gid;
    pid_t pid;
    int node;          /* -1 until HELLO */
    uint32_t version;  /* the protocol version its HELLO said */
    uint64_t channels; /* bit n: IMEX channel n */
    uint64_t next_ref;
    fab__map_t refs; /* ref id -> fab__ref_t */
    fab__map_t ipcs; /* IPC handle id -> fab__ipc_t: what it published */
    /* Kept for the connection's life so that an import allocates nothing:
     * the model's importer (made at the first IMPORT, made again only when
     * the device changes) and the references it dropped, for reuse. */
    fab_importer_t *importer;
    struct fab__ref *spare_refs;
} fab__conn_t;

/* Create the registry for topology (kept, not copied) and key. Returns NULL
 * on no memory. */
fab__registry_t *fab__registry_create(const fab_topology_t *topology,
                                  const uint8_t key[FAB__KEY_BYTES]);

/* Drop every reference of every connection still open, then free. */
void fab__registry_destroy(fab__registry_t *daemon);

/* A new client with these credentials; NULL on no memory, or when its uid
 * already holds max_connections_per_uid connections (logged). */
fab__conn_t *fab__registry_conn_open(fab__registry_t *daemon, uid_t uid, gid_t gid, pid_t pid);

/* The client went away: drop all its references. */
void fab__registry_conn_close(fab__registry_t *daemon, fab__conn_t *conn);

/* The client is being closed but its connection lingers (loop.c: fds it
 * has not read are still in flight): drop every reference and IPC entry it
 * holds, as a close would, but keep the connection counted against its
 * uid until fab__registry_conn_close. */
void fab__registry_conn_reset(fab__registry_t *daemon, fab__conn_t *conn);

/* The count of fds sent to conn's uid and not read yet, which loop.c keeps
 * (the registry only stores it, per uid), and its limit
 * (max_fds_in_flight_per_uid; 0: none). */
uint64_t *fab__registry_conn_fds_in_flight(fab__conn_t *conn);
uint64_t fab__registry_fds_in_flight_limit(const fab__registry_t *daemon);

/* The fds a reply carries, in order: IMPORT_MANY's one per successful
 * import, every other reply's at most one. */
typedef struct fab__reply_fds {
    unsigned count;
    int fd[FAB__PROTO_FDS_MAX];
    /* Bit i: fd[i] is the caller's to close once sent (a read-only
     * reopening); else it is the registry's own memfd, valid until the next
     * call. */
    uint32_t owned;
} fab__reply_fds_t;

/* Close the fds of a reply that are the caller's, and forget them all. */
void fab__reply_fds_release(fab__reply_fds_t *fds);

/* Answer one request. fd_in is the fd that came with it (-1: none); the
 * registry takes it (keeps it or closes it). The reply is always filled, and
 * *fds_out with the fds to send with it. */
void fab__registry_answer(fab__registry_t *daemon, fab__conn_t *conn, const fab__request_t *request,
                        int fd_in, fab__reply_t *reply, fab__reply_fds_t *fds_out);

/* A request that a hung IMEX held (FAB__FAULT_DEFERRED) is past its
 * deadline with the faults unchanged: an IMPORT is answered
 * FAB__FAULT_HUNG_STATUS with nothing done, as it would have been at once
 * by an IMEX that fails; an IMPORT_MANY is put to the rules once more, each
 * import that the hung IMEX still holds failing so, the others answered as
 * ever. */
void fab__registry_answer_expired(fab__registry_t *daemon, fab__conn_t *conn,
                                  const fab__request_t *request, fab__reply_t *reply,
                                  fab__reply_fds_t *fds_out);

/* The reply to request was built but could not be sent (the fds it carried
 * could not travel): drop the references it handed out, if any, so that
 * nothing is held for a reply the client never got. */
void fab__registry_undo(fab__registry_t *daemon, fab__conn_t *conn, const fab__reply_t *reply);

/* Counters for STATS and the idle check. */
size_t fab__registry_conn_count(const fab__registry_t *daemon);
size_t fab__registry_alloc_count(const fab__registry_t *daemon);
/* Log a line that conn's peer made the daemon write, under its uid's
 * budget (every such line is rate-limited per uid, with a count of what was
 * held back). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4)))
#endif
void fab__registry_conn_log(fab__conn_t *conn, fab__log_level_t level, const char *fmt, ...);

/* Tombstones kept (freed allocations adopted from an earlier daemon). */
size_t fab__registry_tombstone_count(const fab__registry_t *daemon);
/* Live IPC entries (published, not withdrawn), over all connections. */
size_t fab__registry_ipc_count(const fab__registry_t *daemon);

/* The field faults the registry's rules obey (src/daemon/fieldfaults.h): the
 * event loop asks them how long a hung IMEX holds an import, and whether
 * they changed since. An IMPORT that a hung IMEX holds is answered with
 * status FAB__FAULT_DEFERRED and nothing else done: the loop keeps the
 * request and puts it to fab__registry_answer again later (or, past its
 * deadline, to fab__registry_answer_expired). An IMPORT_MANY is held as a
 * whole when any of its imports would be: the imports before that one are
 * undone, and the whole batch is put to the rules again. */
struct fab__faults;
struct fab__faults *fab__registry_faults(fab__registry_t *daemon);

#endif /* FABMEM_DAEMON_REGISTRY_H */
