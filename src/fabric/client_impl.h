/* The client library's inside, shared by its files: the client and region
 * records, and the calls one file makes of another's (connect.c: connecting;
 * client.c: the connection and its calls; region.c: regions; client_mc.c:
 * multicast teams; services.c: legacy IPC and field faults). Not installed. */
#ifndef FABMEM_FABRIC_CLIENT_IMPL_H
#define FABMEM_FABRIC_CLIENT_IMPL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "fabmem/fabric.h"
#include "src/base/rwlock.h"
#include "src/common/proto.h"

struct fab_client {
    /* Every call's, taken for writing only (a mutex with glibc's default
     * kind's rules: not recursive, no owner check). One compare-and-swap
     * each way, where pthread_mutex_t's lock and unlock cost an import's
     * four calls some 220 instructions and libc's lock code and state. Zero
     * (calloc's) is unlocked. */
    fab__rwlock_t lock;
    pid_t pid;       /* the process that owns the connection */
    int timeout_ms;  /* FABMEM_TIMEOUT_MS; 0: no deadline */
    int sock;
    uint32_t seq;
    int node;
    uint32_t proto;  /* the protocol version the daemon took in HELLO */
    size_t live_regions;
    unsigned deferred; /* replies not read yet: RELEASEs, and calls that timed out */
    /* Imported regions released since the last request: their ids ride on
     * the next one (protocol 5), which costs no message and no reply. */
    uint8_t nreleases;
    uint64_t releases[FAB__PROTO_RELEASES_MAX];
    /* The fds of the regions whose ids wait in releases[] (never more of
     * them than ids): closed once the ids leave the queue, right after the
     * request that carries them is sent, while the daemon works on it, so
     * that the close costs the importer's wait nothing on two cores
     * (fab__client_releases_gone, client.c). */
    uint8_t nclosing;
    int closing[FAB__PROTO_RELEASES_MAX];
    int rcvtimeo_ms; /* SO_RCVTIMEO on sock now; 0: none */
    /* The message being sent or the reply being read, under the lock: one
     * buffer here, next to what a call touches anyway, keeps 3 KB of
     * buffers off the stack of every call, which then spans a page less. */
    uint8_t wire[FAB__PROTO_MAX];
    /* The last region record freed, kept for the next one made (region.c:
     * an import then calls neither malloc nor free); NULL: none. */
    fab_region_t *spare;
    bool keeps_spare; /* not under a memory checker (fab__region_keeps_spare) */
    fab_region_t *regions; /* live regions, for adoption by a restarted daemon */
    fab_topology_t *topology;  /* the daemon's, as a connection learned it; NULL: not yet */
    bool topology_stale;       /* learned on an earlier connection: ask again */
    fab_topology_t **outdated; /* earlier connections' (callers may still read them) */
    size_t noutdated;
    int autostart;
    char node_name[256];
    char path[PATH_MAX];
};

/* An imported region's release costs nothing on the wire of its own: its
 * id rides on the next request (or goes out with a RELEASE once
 * FAB__PROTO_RELEASES_MAX wait), and gets no reply. If no request follows,
 * closing the connection (or the process exiting) drops the daemon's
 * reference all the same. A region this process allocated is released with
 * a RELEASE message, whose reply may carry the never-imported warning.
 *
 * RELEASE does not wait for its reply: the reply is read with the next
 * request's, so a release costs one message instead of a round trip. At
 * most this many stay unread, so that neither side's socket buffer can
 * fill. */
#define FAB__DEFERRED_MAX 8

#define FAB__TIMEOUT_DEFAULT_MS 10000
#define FAB__RCVTIMEO_SLACK_MS 50
/* fab__reply_read's deadline for a wait whose clock is read only if it
 * outlasts FAB__RCVTIMEO_SLACK_MS (client.c). */
#define FAB__ONE_RECEIVE (-2)

struct fab_region {
    fab_client_t *client;
    uint64_t id;
    int fd;
    size_t size;
    fab_access_t access; /* what this process may map */
    fab_uuid_t uuid;
    int device;
    unsigned refs;         /* the caller's until fab_region_release, one per mapping */
    bool released;         /* the caller's reference is gone (a second release is refused) */
    bool creator;          /* allocated here, not imported */
    uint32_t handle_type;  /* creator: the types it asked for */
    fab_handle_t handle;   /* proof of the uuid, for ADOPT */
    uint8_t kind;          /* imported: what the daemon said it is (FAB__MEMORY_*) */
    uint8_t token[FAB__TOKEN_BYTES]; /* creator: proof of having made it, for ADOPT */
    fab_region_t *prev, *next;
    size_t nmaps, capmaps;
    void **maps;           /* map_inline until a third mapping at once */
    void *map_inline[2];
};


/* The fds that came with a reply, in order. lost: the kernel had no room
 * in this process's table for the ones after them (they are gone). */
typedef struct fab__fds {
    unsigned count;
    int lost;
    int fd[FAB__PROTO_FDS_MAX];
} fab__fds_t;

int64_t fab__client_deadline(const fab_client_t *client);
int fab__client_connect(const fab_client_t *client, fab_status_t *status_out);
void fab__client_connection_lost(fab_client_t *client);
void fab__client_release_send(fab_client_t *client, uint64_t id);
void fab__client_fds_close(fab__fds_t *fds);
void fab__client_release_later(fab_client_t *client, uint64_t id);
void fab__client_drain(fab_client_t *client);
int fab__client_request_send(fab_client_t *client, fab__request_t *request, int fd_in,
                             uint8_t flags);
fab_status_t fab__client_call_raw(fab_client_t *client, fab__request_t *request, int fd_in,
                                  fab__reply_t *reply_out, int *fd_out);
fab_status_t fab__client_reply_await(fab_client_t *client, const fab__request_t *request,
                                     fab__reply_t *reply_out, int *fd_out);
fab_status_t fab__client_reply_await_fds(fab_client_t *client, const fab__request_t *request,
                                         fab__reply_t *reply_out, fab__fds_t *fds_out);
fab_status_t fab__client_reconnect(fab_client_t *client);
fab_status_t fab__client_call(fab_client_t *client, fab__request_t *request,
                              const fab_region_t *region, fab__reply_t *reply_out, int *fd_out);
bool fab__client_owned(const fab_client_t *client);
/* region.c: whether a client keeps a freed region record for the next one:
 * not under AddressSanitizer or valgrind, whose own delayed reuse of freed
 * blocks is what finds a region used after its release. */
bool fab__region_keeps_spare(void);

/* client_mc.c: one MC_* request as given (request->type and u.mc set by
 * the caller; u.mc.id is replaced by region's id when region is not NULL),
 * under client_mc.h's one call per message; tests speak the wire through it
 * as a client that does not play by libcuda's rules. fd_in rides along (-1:
 * none; the caller keeps its own). On success the reply's body in
 * *reply_out and its fds, in order, in fds_out (up to 2; *nfds_out of them,
 * the caller's to close); an error hands out none. FAB_SUCCESS, the
 * daemon's refusal, ILLEGAL_STATE after fork, SYSTEM_NOT_READY. */
fab_status_t fab__client_mc_request(fab_client_t *client, fab__request_t *request,
                                    fab_region_t *region, int fd_in, fab__reply_t *reply_out,
                                    int fds_out[2], unsigned *nfds_out);

#endif /* FABMEM_FABRIC_CLIENT_IMPL_H */
