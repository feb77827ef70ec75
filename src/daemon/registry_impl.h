/* The registry's inside, shared by the files that make it up (registry.c,
 * limits.c, tags.c, handlers.c, ipc.c, dispatch.c) and by no other: the
 * records of allocations, references, IPC entries, users and the registry
 * itself, and the functions one of those files gives the others. */
#ifndef FABMEM_DAEMON_REGISTRY_IMPL_H
#define FABMEM_DAEMON_REGISTRY_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "fabmem/handle.h"
#include "fabmem/model.h"
#include "src/common/log.h"
#include "src/common/proto.h"
#include "src/daemon/fieldfaults.h"
#include "src/daemon/registry.h"
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

/* One kind of log line a user's peers triggered, and its limiter. */
typedef struct fab__log_kind {
    const char *fmt;
    fab__log_limit_t limit;
} fab__log_kind_t;

struct fab__user {
    uid_t uid;
    uint64_t connections;
    uint64_t allocations;
    uint64_t bytes;
    uint64_t references;
    uint64_t ipcs;          /* IPC entries its connections published */
    uint64_t fds_in_flight; /* fds sent to it not read yet (loop.c counts them) */
    /* Every log line one of its peers can trigger is limited per uid and
     * per kind of line: a refusal over a [daemon] limit once a second
     * (log_limit), any other warning or error FAB__USER_LOG_WARN_PER_SECOND
     * a second, an info or debug line FAB__USER_LOG_INFO_PER_SECOND; then a
     * count of the rest. A kind is its format string: each has a limiter of
     * its own (log_kinds, as many as the daemon's formats that it logged),
     * so no line ever spends another's budget. Only a kind that finds no
     * memory for its limiter shares one (log_spill). A user that logged is
     * kept (logged), so that reconnecting starts no fresh budget: one
     * record per uid that ever logged. */
    fab__log_limit_t log_limit;
    fab__log_kind_t *log_kinds;
    size_t nlog_kinds, log_kinds_cap;
    fab__log_limit_t log_spill;
    bool logged;
};

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

static inline bool fab__alloc_live(const fab__alloc_t *alloc)
{
    return alloc->fd >= 0;
}

/* ---- users and their limits (limits.c) ---------------------------------------- */

void fab__user_free(fab__user_t *user);
fab__user_t *fab__user_get(fab__registry_t *daemon, uid_t uid);
/* Forget a user that holds nothing any more. */
void fab__user_put(fab__registry_t *daemon, fab__user_t *user);
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4)))
#endif
void fab__user_log(fab__user_t *user, fab__log_level_t level, const char *fmt, ...);
/* Whether user may hold one more live allocation of size bytes; says why
 * not in the log. */
bool fab__user_may_allocate(fab__registry_t *daemon, fab__user_t *user, uint64_t size);

/* ---- tags and tokens (tags.c) ------------------------------------------------- */

uint64_t fab__uuid_key(const fab_uuid_t *uuid);
bool fab__uuid_ours(const fab__registry_t *daemon, const fab_uuid_t *uuid);
void fab__handle_tag(const fab__registry_t *daemon, const uint8_t *bytes,
                     uint8_t tag[FAB_HANDLE_TAG_BYTES]);
void fab__creator_token(const fab__registry_t *daemon, const fab_uuid_t *uuid,
                        uint8_t token[FAB__TOKEN_BYTES]);
fab_handle_t fab__alloc_mint(const fab__registry_t *daemon, const fab__alloc_t *alloc);

/* ---- allocations and references (registry.c) ------------------------------------ */

uint64_t *fab__device_used(fab__registry_t *daemon, int node, int device);
void fab__alloc_free(fab__registry_t *daemon, fab__alloc_t *alloc);
fab_status_t fab__ref_add(fab__registry_t *daemon, fab__conn_t *conn, fab__alloc_t *alloc,
                          bool creator, fab__ref_t **ref_out);
/* Drop one reference: out of its connection's map, off its allocation. */
void fab__ref_drop(fab__registry_t *daemon, fab__ref_t *ref);
fab__ref_t *fab__ref_get(fab__conn_t *conn, uint64_t id);
/* Make alloc live with memfd fd, charged to conn's user and node. */
void fab__alloc_bring_live(fab__registry_t *daemon, fab__alloc_t *alloc, fab__conn_t *conn,
                           int fd);
/* A new allocation record for memory the model calls memory (pending: no fd). */
fab__alloc_t *fab__alloc_new(fab__registry_t *daemon, fab_memory_t *memory, uint64_t key);

/* ---- the requests (handlers.c, ipc.c), which dispatch.c calls ----------------- */

fab_status_t fab__reg_hello(fab__registry_t *daemon, fab__conn_t *conn,
                            const fab__request_t *request, fab__reply_t *reply);
fab_status_t fab__reg_alloc(fab__registry_t *daemon, fab__conn_t *conn,
                            const fab__request_t *request, fab__reply_t *reply, int *fd_out);
fab_status_t fab__reg_export(fab__registry_t *daemon, fab__conn_t *conn,
                             const fab__request_t *request, fab__reply_t *reply);
fab_status_t fab__reg_import(fab__registry_t *daemon, fab__conn_t *conn,
                             const fab__request_t *request, fab__reply_t *reply,
                             fab__reply_fds_t *fds);
fab_status_t fab__reg_import_many(fab__registry_t *daemon, fab__conn_t *conn,
                                  const fab__request_t *request, fab__reply_t *reply,
                                  fab__reply_fds_t *fds, bool expired);
/* Drop reference id of conn, as RELEASE does. */
fab_status_t fab__release_id(fab__registry_t *daemon, fab__conn_t *conn, uint64_t id,
                             fab__reply_t *reply);
fab_status_t fab__reg_release(fab__registry_t *daemon, fab__conn_t *conn,
                              const fab__request_t *request, fab__reply_t *reply);
fab_status_t fab__reg_adopt(fab__registry_t *daemon, fab__conn_t *conn,
                            const fab__request_t *request, int *fd_in, fab__reply_t *reply);
fab_status_t fab__reg_verify(fab__registry_t *daemon, const fab__conn_t *conn,
                             const fab__request_t *request, fab__reply_t *reply);
fab_status_t fab__reg_topology(const fab__registry_t *daemon, const fab__request_t *request,
                               fab__reply_t *reply);
void fab__reg_stats(fab__registry_t *daemon, const fab__conn_t *conn, fab__reply_t *reply);

/* A connection leaves: everything it published is withdrawn. */
void fab__ipc_drop_all(fab__registry_t *daemon, fab__conn_t *conn);
fab_status_t fab__reg_ipc_publish(fab__registry_t *daemon, fab__conn_t *conn,
                                  const fab__request_t *request, int *fd_in, fab__reply_t *reply);
fab_status_t fab__reg_ipc_open(fab__registry_t *daemon, fab__conn_t *conn,
                               const fab__request_t *request, fab__reply_t *reply, int *fd_out,
                               int *fd_owned);
fab_status_t fab__reg_ipc_withdraw(fab__registry_t *daemon, fab__conn_t *conn,
                                   const fab__request_t *request);

#endif /* FABMEM_DAEMON_REGISTRY_IMPL_H */
