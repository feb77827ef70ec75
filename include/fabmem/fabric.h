/* The fabric: real memory shared between real processes through fabric
 * handles, under the rules NVIDIA's driver and IMEX service enforce.
 *
 * The client (fab_client_*, fab_region_*) talks to fabmemd, the daemon that
 * plays the IMEX service, over a Unix socket; the topology it reads the
 * daemon's answers with is fabmem/topology.h's. An allocation is a memfd
 * the daemon creates and hands back with SCM_RIGHTS; its 64-byte handle may
 * travel through any byte channel; an importer presents it to the daemon,
 * which checks it (tag, domain, channel, reachability, liveness) and passes
 * the same memfd back.
 *
 * Lifecycle of a region (the client's reference to one allocation):
 *
 *   fab_client_allocate / fab_client_import ──▶ region (daemon holds a reference)
 *        ──▶ fab_region_map ... fab_region_unmap
 *        ──▶ fab_region_release (the reference is dropped once the region is
 *            released and unmapped; when the last reference anywhere drops the
 *            daemon forgets the allocation and its handles become stale)
 *
 * If the daemon goes away, the next call on a client connects again (starting
 * a daemon if autostart allows) and hands the client's live regions to the
 * new daemon, so that a daemon restarted with the same state file honours the
 * handles that were live (docs/fabric.md, "Restart").
 *
 * Environment (read when an option is left NULL / negative):
 *   FABMEM_SOCKET        daemon socket path (default $XDG_RUNTIME_DIR/fabmem/fabmemd.sock,
 *                        else /tmp/fabmem-$UID/fabmemd.sock)
 *   FABMEM_CONFIG        config file (default: the built-in topology)
 *   FABMEM_NODE          the emulated node this process sits on (default: the first)
 *   FABMEM_NO_AUTOSTART  "1": never start a daemon on demand
 *   FABMEM_DAEMON        the fabmemd to autostart (default: next to the
 *                        library, ../bin or ../../bin, then $PATH)
 *   FABMEM_LOG           error, warn (default), info, debug
 *   FABMEM_TIMEOUT_MS    how long any wait for the daemon may last (default
 *                        10000; 0: no deadline); then SYSTEM_NOT_READY, and
 *                        the connection stays usable
 *
 * Trust: the client connects only through a socket directory that is a real
 * directory of this user's or root's that nobody else may write, and only to
 * a daemon that runs as this user or as root; anything else is refused with
 * FAB_ERROR_NOT_PERMITTED (docs/fabric.md, "Security model").
 *
 * Fork: a client and its regions belong to the process that connected it.
 * In a child after fork() every fab_client_* and fab_region_* call on them
 * returns FAB_ERROR_ILLEGAL_STATE and touches nothing the parent shares (the
 * readers fab_region_fd/size/access/uuid/device_ordinal excepted); connect a
 * new client in the child.
 *
 * Thread safety: fab_client_* and fab_region_* are thread-safe:
 * many threads may use one client and its regions at once (the driver
 * emulation does). */
#ifndef FABMEM_FABRIC_H
#define FABMEM_FABRIC_H

#include "fabmem/model.h"
#include "fabmem/topology.h"

FAB_EXTERN_C_BEGIN

typedef struct fab_client fab_client_t;
typedef struct fab_region fab_region_t;

typedef struct fab_client_options {
    const char *socket_path; /* NULL: $FABMEM_SOCKET, else the per-user default */
    const char *node;        /* NULL: $FABMEM_NODE, else the first node */
    int autostart;           /* < 0: unless FABMEM_NO_AUTOSTART=1; 0: never; > 0: always */
} fab_client_options_t;

/* Connect to the daemon, starting one for this user if none answers and
 * autostart allows. options may be NULL (all defaults).
 * Errors:
 *   FAB_ERROR_INVALID_VALUE    client_out is NULL
 *   FAB_ERROR_SYSTEM_NOT_READY no daemon answers and none may or could be started,
 *                              or it closed the connection (over its per-uid
 *                              connection limit, say)
 *   FAB_ERROR_NOT_PERMITTED    the socket's directory or the daemon's uid breaks
 *                              a trust rule (logged, naming the path and rule)
 *   FAB_ERROR_NOT_FOUND        the daemon does not know the node
 *   FAB_ERROR_OUT_OF_MEMORY    no memory */
FAB_API fab_status_t fab_client_connect(const fab_client_options_t *options,
                                        fab_client_t **client_out);

/* Close the connection. Refused while regions of this client are unreleased.
 * NULL is a no-op (success).
 * Errors: FAB_ERROR_ILLEGAL_STATE (regions still live; nothing is closed). */
FAB_API fab_status_t fab_client_close(fab_client_t *client);

/* Create a fabric-exportable allocation of props->size bytes on device
 * props->device_ordinal of this client's node, backed by a memfd.
 * Errors:
 *   FAB_ERROR_INVALID_VALUE    NULL argument; size 0 or not a multiple of the
 *                              device's granularity; the model's props checks
 *   FAB_ERROR_INVALID_DEVICE   no such device on this node
 *   FAB_ERROR_NOT_SUPPORTED    handle_type lacks FABRIC
 *   FAB_ERROR_NOT_PERMITTED    this user holds no IMEX channel
 *   FAB_ERROR_OUT_OF_MEMORY    the daemon or the system is out of memory, the
 *                              user's max_allocations_per_uid/max_bytes_per_uid
 *                              is reached, or this process had no fd left for
 *                              the memfd (the connection stays)
 *   FAB_ERROR_SYSTEM_NOT_READY the daemon went away */
FAB_API fab_status_t fab_client_allocate(fab_client_t *client, const fab_alloc_props_t *props,
                                         fab_region_t **region_out);

/* Import a handle received from a peer onto device_ordinal of this node.
 * Errors:
 *   FAB_ERROR_INVALID_VALUE    NULL argument
 *   FAB_ERROR_INVALID_DEVICE   no such device on this node
 *   FAB_ERROR_INVALID_HANDLE   forged, altered, stale (memory gone), or minted
 *                              in another IMEX domain
 *   FAB_ERROR_NOT_PERMITTED    no IMEX channel shared with the exporter, or the
 *                              exporter granted no access
 *   FAB_ERROR_NOT_SUPPORTED    same domain but not reachable (other clique or
 *                              cluster, or fabric state not COMPLETED)
 *   FAB_ERROR_SYSTEM_NOT_READY the daemon went away */
FAB_API fab_status_t fab_client_import(fab_client_t *client, const fab_handle_t *handle,
                                       int device_ordinal, fab_region_t **region_out);

/* Import count handles onto device_ordinal at once, as a library that maps
 * every peer's memory does: up to sixteen handles go in one request and
 * their fds come back in one reply (protocol 6; with a version-5 daemon,
 * eight single imports sent together), so that count imports cost about one
 * round trip per sixteen instead of one each. Each import is checked as
 * fab_client_import checks it. regions_out[i] is the
 * region of handles[i], or NULL where that import failed; statuses_out
 * (may be NULL) says why, with the errors of fab_client_import. Returns
 * FAB_SUCCESS when every import succeeded, else the first failure; the
 * regions that were made are the caller's to release either way.
 * Errors besides: FAB_ERROR_INVALID_VALUE (client NULL, or count > 0 with
 * handles or regions_out NULL: nothing imported). */
FAB_API fab_status_t fab_client_import_many(fab_client_t *client, const fab_handle_t *handles,
                                            size_t count, int device_ordinal,
                                            fab_region_t **regions_out,
                                            fab_status_t *statuses_out);

/* The region's fabric handle, to send to peers.
 * Errors: FAB_ERROR_INVALID_VALUE (NULL argument), FAB_ERROR_INVALID_HANDLE
 * (region already released), FAB_ERROR_NOT_PERMITTED (peer access NONE). */
FAB_API fab_status_t fab_region_export(fab_region_t *region, fab_handle_t *handle_out);

/* Readers. The fd is owned by the region: dup it to keep it (a read-only
 * import's fd is opened read-only). fab_region_access is what this process
 * may map: READ_WRITE for the allocating process, the granted access for an
 * import. NULL reads as -1 / zeros. */
FAB_API int fab_region_fd(const fab_region_t *region);
FAB_API size_t fab_region_size(const fab_region_t *region);
FAB_API fab_access_t fab_region_access(const fab_region_t *region);
FAB_API fab_uuid_t fab_region_uuid(const fab_region_t *region);
FAB_API int fab_region_device_ordinal(const fab_region_t *region);

/* Map the whole region with access (READ_ONLY or READ_WRITE); a read-only
 * mapping faults on write.
 * Errors: FAB_ERROR_INVALID_VALUE (NULL argument, access NONE),
 *         FAB_ERROR_NOT_PERMITTED (more access than the exporter granted),
 *         FAB_ERROR_OUT_OF_MEMORY (mmap failed). */
FAB_API fab_status_t fab_region_map(fab_region_t *region, fab_access_t access, void **addr_out);

/* Unmap a mapping made by fab_region_map.
 * Errors: FAB_ERROR_INVALID_VALUE (NULL argument, addr not such a mapping). */
FAB_API fab_status_t fab_region_unmap(fab_region_t *region, void *addr);

/* Drop this process's reference: at once if nothing is mapped, else when the
 * last fab_region_map mapping is unmapped. The region must not be used after
 * this call except by fab_region_unmap for its live mappings. A caller that
 * mmaps fab_region_fd() itself must keep its own count and release last.
 * Errors: FAB_ERROR_INVALID_VALUE (NULL). */
FAB_API fab_status_t fab_region_release(fab_region_t *region);

/* ---- additions for tools, tests and benchmarks ------------------------------ */

/* The daemon's counters (fabmem CLI, bench). */
typedef struct fab_daemon_stats {
    uint64_t pid;         /* the daemon's process id */
    uint64_t clients;     /* connected clients */
    uint64_t allocations; /* live allocations */
    uint64_t references;  /* live references (regions) over all clients */
    uint64_t bytes;       /* bytes in live allocations */
    uint64_t rss;         /* the daemon's resident set, bytes */
} fab_daemon_stats_t;

/* Ask the daemon for its counters.
 * Errors: FAB_ERROR_INVALID_VALUE (NULL argument),
 *         FAB_ERROR_SYSTEM_NOT_READY (the daemon went away). */
FAB_API fab_status_t fab_client_stats(fab_client_t *client, fab_daemon_stats_t *stats_out);

/* Ask the daemon whether it minted handle (its tag checks out with the
 * daemon's key, which survives restarts through the state file), and whether
 * the memory it names is still live. Nothing is imported.
 * Errors: FAB_ERROR_INVALID_VALUE (NULL argument),
 *         FAB_ERROR_INVALID_HANDLE (not minted by this fabric, or altered),
 *         FAB_ERROR_SYSTEM_NOT_READY (the daemon went away). */
FAB_API fab_status_t fab_client_verify(fab_client_t *client, const fab_handle_t *handle,
                                       bool *live_out);

/* The daemon's topology: its nodes, their devices, IMEX domains, cliques,
 * fabric states, and the driver version. This, not a config file read by the
 * client, is what the fabric enforces. Asked of the daemon once per
 * connection (a reconnection asks again); the topology stays valid until
 * fab_client_close, and is read with the fab_topology_* readers (it holds no
 * channels: those are the daemon's business).
 * Errors: FAB_ERROR_INVALID_VALUE (NULL argument), FAB_ERROR_OUT_OF_MEMORY,
 *         FAB_ERROR_SYSTEM_NOT_READY (the daemon went away). */
FAB_API fab_status_t fab_client_topology(fab_client_t *client, const fab_topology_t **topology_out);

/* The index (in the daemon's topology) of the node this client sits on;
 * -1 for NULL. */
FAB_API int fab_client_node_index(const fab_client_t *client);

FAB_EXTERN_C_END

#endif /* FABMEM_FABRIC_H */
