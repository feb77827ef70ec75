/* The client: one connection to fabmemd, and the regions (references to
 * allocations) made through it. One request is in flight per client at a
 * time: a call takes the client's mutex, sends, and waits for the reply, so
 * threads may share a client and its regions.
 *
 * Lifecycle of a region, one count (refs) with get/put:
 *   allocate / import   refs = 1, the caller's (the daemon adds its own
 *                       reference, the memfd arrives)
 *   map                 get: refs + 1
 *   unmap               put
 *   release             put of the caller's; no call may name it after
 *   last put            fab__region_put's release: the RELEASE request goes
 *                       out and the fd is closed
 *
 * Trust: before connecting, the socket's directory must be a real directory
 * (not a symbolic link) of this user's or root's that nobody else may write;
 * after connecting, the daemon must run as this user or as root
 * (SO_PEERCRED). Anything else could be a daemon planted by another user, who
 * would then read and write all our memory: it is refused with
 * NOT_PERMITTED, and the log names the path and the rule.
 *
 * Deadlines: every wait for the daemon ends after FABMEM_TIMEOUT_MS
 * (default 10000; 0: never) with SYSTEM_NOT_READY, the connect itself
 * included (a daemon whose listen backlog is full). The connection stays: the
 * late reply is read with a later one and undone (a region it handed out is
 * released), as a RELEASE reply is.
 *
 * Restart: when the connection breaks, the next call connects again (starting
 * a daemon if allowed), and ADOPTs every live region back (creators' first,
 * with the creator token of their ALLOC reply) with its handle and fd, then
 * sends the call again, rebuilt from the region it names (the new daemon
 * gave the region a new id); a daemon that restarted with the same state file
 * thus honours the handles that were live.
 *
 * Fork: a client belongs to the process that connected it. In a child after
 * fork() every call on it or its regions returns ILLEGAL_STATE and touches
 * nothing: the socket is the parent's.
 *
 * Autostart: with no daemon answering, connect starts one (double fork, so it
 * is no child of ours) with --autostarted, which makes it exit once idle; it
 * says it is listening over a pipe, or closes the pipe when another daemon
 * won the race, after which connecting again finds that one. */
#include "fabmem/fabric.h"
#include "src/fabric/fabmemd.h"
#include "src/fabric/client_ipc.h"
#include "src/fabric/client_mc.h"
#include "src/fabric/client_fault.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "src/common/log.h"
#include "src/common/proto.h"
#include "src/fabric/observe.h"
#include "src/base/env.h"

/* The client's names for the IPC handle are the wire's (src/fabric/client_ipc.h). */
_Static_assert(FAB__CLIENT_IPC_HANDLE_BYTES == FAB__IPC_HANDLE_BYTES, "IPC handle length");
_Static_assert((int)FAB__CLIENT_IPC_KIND_MEM == (int)FAB__IPC_KIND_MEM, "IPC kind MEM");
_Static_assert((int)FAB__CLIENT_IPC_KIND_EVENT == (int)FAB__IPC_KIND_EVENT, "IPC kind EVENT");

struct fab_client {
    pthread_mutex_t lock;
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
    int rcvtimeo_ms; /* SO_RCVTIMEO on sock now; 0: none */
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
    void **maps;
};

/* ---- connecting ------------------------------------------------------------ */

static int64_t fab__deadline(const fab_client_t *client)
{
    return client->timeout_ms > 0 ? fab__now_ms() + client->timeout_ms : -1;
}


/* Set how long a send on sock (connect included) may block: ms, at least 1;
 * 0 leaves it unbounded. */
static int fab__send_timeout(int sock, int64_t ms)
{
    if (ms <= 0)
        return 0;
    struct timeval tv = {.tv_sec = (time_t)(ms / 1000), .tv_usec = (suseconds_t)(ms % 1000) * 1000};
    return setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* One connection to the socket at path, given up at deadline (-1: none)
 * with ETIMEDOUT. A daemon whose listen backlog is full (a hung one, or one
 * another user floods) leaves an AF_UNIX connect() waiting for room, and
 * poll cannot wait for that on a non-blocking socket (connect answers
 * EAGAIN at once, with nothing in progress), so the wait is bounded by
 * SO_SNDTIMEO, which the kernel applies to that wait. It stays set to
 * timeout_ms: a send that blocks as long breaks the connection
 * (SYSTEM_NOT_READY) rather than hanging the call. */
static int fab__connect_once(const char *path, int64_t deadline, int timeout_ms)
{
    int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (sock < 0)
        return -1;
    struct sockaddr_un addr;
    if (fab__sockaddr_un(path, &addr) != 0) {
        close(sock);
        return -1;
    }
    for (;;) {
        int64_t left = deadline >= 0 ? deadline - fab__now_ms() : 0;
        if (deadline >= 0 && (left <= 0 || fab__send_timeout(sock, left) != 0)) {
            errno = ETIMEDOUT;
            break;
        }
        if (connect(sock, (struct sockaddr *)&addr, sizeof(addr)) == 0) {
            if (fab__send_timeout(sock, timeout_ms) != 0)
                break;
            return sock;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            errno = ETIMEDOUT; /* the backlog stayed full until the deadline */
        if (errno != EINTR)
            break;
    }
    int saved = errno;
    close(sock);
    errno = saved;
    return -1;
}

extern char **environ;

/* Start a daemon for socket path and wait until it listens or gives way
 * (fab__fabmemd_spawn: detached, so that it is no child of ours). */
static int fab__fabmemd_start(const char *socket_path, int timeout_ms)
{
    char exe[PATH_MAX];
    if (fab__fabmemd_find(exe, sizeof(exe)) != 0) {
        fab__log(FAB__LOG_WARN, "no fabmemd to start (set FABMEM_DAEMON)");
        return -1;
    }
    /* The daemon's environment: ours, with FABMEM_SOCKET the socket's. */
    char sockenv[PATH_MAX + 16];
    snprintf(sockenv, sizeof(sockenv), FAB__ENV_SOCKET "=%s", socket_path);
    size_t nenv = 0;
    while (environ != NULL && environ[nenv] != NULL)
        nenv++;
    char **envp = calloc(nenv + 2, sizeof(*envp));
    if (envp == NULL)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < nenv; i++) {
        if (strncmp(environ[i], FAB__ENV_SOCKET "=", sizeof(FAB__ENV_SOCKET)) != 0)
            envp[k++] = environ[i];
    }
    envp[k++] = sockenv;
    static const char *const args[] = {"--autostarted", NULL};
    fab__fabmemd_spawn_t spawn = {.exe = exe, .args = args, .envp = envp, .detach = 1,
                                  .ready_fd = -1, .timeout_ms = timeout_ms};
    int ready = fab__fabmemd_spawn(&spawn, NULL);
    free(envp);
    if (ready < 0)
        return -1; /* no pipe, no fork */
    fab__log(FAB__LOG_INFO, "started %s for %s: %s", exe, socket_path,
             ready == 0 ? "ready" : "it gave way or failed");
    return 0;
}

/* Whether the daemon at the other end of sock may be trusted with our
 * memory: it runs as us or as root. */
static int fab__peer_trusted(int sock, const char *path)
{
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
        fab__log(FAB__LOG_WARN, "fabmemd at %s: SO_PEERCRED: %s", path, strerror(errno));
        return 0;
    }
    if (cred.uid == geteuid() || cred.uid == 0)
        return 1;
    fab__log(FAB__LOG_ERROR,
             "refusing fabmemd at %s: it runs as uid %lu (pid %ld); a daemon must run as this "
             "user (uid %lu) or as root", path, (unsigned long)cred.uid, (long)cred.pid,
             (unsigned long)geteuid());
    return 0;
}

/* A connection to a daemon we may trust, starting one if allowed. -1 with
 * *status_out NOT_PERMITTED (a trust rule broken: logged) or
 * SYSTEM_NOT_READY (no daemon). */
static int fab__connect(const fab_client_t *client, fab_status_t *status_out)
{
    const char *path = client->path;
    char why[PATH_MAX + 160];
    *status_out = FAB_ERROR_SYSTEM_NOT_READY;
    if (fab__socket_dir_check(path, FAB__DIR_CLIENT, why, sizeof(why)) != 0) {
        if (errno == EPERM) {
            fab__log(FAB__LOG_ERROR, "refusing fabmemd's socket: %s", why);
            *status_out = FAB_ERROR_NOT_PERMITTED;
            return -1;
        }
        if (!client->autostart)
            return -1; /* no directory: no daemon */
        if (fab__socket_dir_make(path, FAB__DIR_CLIENT, why, sizeof(why)) != 0) {
            fab__log(FAB__LOG_ERROR, "refusing fabmemd's socket: %s", why);
            if (errno == EPERM)
                *status_out = FAB_ERROR_NOT_PERMITTED;
            return -1;
        }
    }
    int64_t deadline = fab__deadline(client);
    int sock = fab__connect_once(path, deadline, client->timeout_ms);
    if (sock < 0 && client->autostart && (errno == ENOENT || errno == ECONNREFUSED) &&
        fab__fabmemd_start(path, client->timeout_ms) == 0) {
        /* The daemon that won a start race may still be binding: retry
         * briefly, within the deadline. */
        for (int i = 0; i < 500 && sock < 0 && (errno == ENOENT || errno == ECONNREFUSED) &&
                        (deadline < 0 || fab__now_ms() < deadline);
             i++) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
            sock = fab__connect_once(path, deadline, client->timeout_ms);
        }
    }
    if (sock < 0) {
        if (errno == ETIMEDOUT)
            fab__log(FAB__LOG_WARN, "fabmemd at %s did not take the connection within %d ms "
                     "(its listen backlog is full)", path, client->timeout_ms);
        return -1;
    }
    if (!fab__peer_trusted(sock, path)) {
        close(sock);
        *status_out = FAB_ERROR_NOT_PERMITTED;
        return -1;
    }
    return sock;
}

static void fab__connection_lost(fab_client_t *client)
{
    fab__log(FAB__LOG_WARN, "lost the connection to fabmemd");
    close(client->sock);
    client->sock = -1;
    client->deferred = 0;
    client->nreleases = 0; /* the daemon that held them dropped them */
    client->rcvtimeo_ms = 0;
    client->topology_stale = true; /* the next daemon may be another */
}

/* observe.h: the lifetime checker's ear for the same news. */
static fab__client_unimported_fn fab__unimported_hook;

void fab__client_set_unimported_hook(fab__client_unimported_fn fn)
{
    __atomic_store_n(&fab__unimported_hook, fn, __ATOMIC_RELEASE);
}

static void fab__warn_unimported(const fab__reply_t *reply)
{
    fab__client_unimported_fn hook = __atomic_load_n(&fab__unimported_hook, __ATOMIC_ACQUIRE);
    if (hook)
        hook(&reply->u.release.uuid, reply->u.release.unimported);
    char hex[33];
    fab__uuid_hex(&reply->u.release.uuid, hex);
    fab__log(FAB__LOG_WARN,
             "allocation %s released with %u exported handles never imported: "
             "a late import will fail", hex, reply->u.release.unimported);
}

/* The reference a successful ALLOC or IMPORT reply handed out; 0 for none. */
static uint64_t fab__reply_region(const fab__reply_t *reply)
{
    if (reply->status != FAB_SUCCESS)
        return 0;
    if (reply->type == FAB__MSG_ALLOC)
        return reply->u.alloc.memory.region;
    return reply->type == FAB__MSG_IMPORT ? reply->u.import.region : 0;
}

/* Encode request with the released ids that wait (they leave the queue
 * once the message is sent). */
static size_t fab__request_encode_releasing(fab_client_t *client, fab__request_t *request,
                                            uint8_t *buf)
{
    request->nreleases = client->nreleases;
    memcpy(request->releases, client->releases, client->nreleases * sizeof(client->releases[0]));
    return fab__request_encode(request, buf);
}

/* Send RELEASE for a reference without waiting for its reply; the caller
 * holds the lock. */
static void fab__release_send(fab_client_t *client, uint64_t id)
{
    fab__request_t request = {.type = FAB__MSG_RELEASE, .seq = ++client->seq};
    request.u.region.region = id;
    uint8_t buf[FAB__PROTO_MAX];
    size_t len = fab__request_encode_releasing(client, &request, buf);
    if (fab__proto_send(client->sock, buf, len, -1) == 0) {
        client->nreleases = 0;
        client->deferred++;
    } else {
        fab__connection_lost(client);
    }
}

/* The fds that came with a reply, in order. lost: the kernel had no room
 * in this process's table for the ones after them (they are gone). */
typedef struct fab__fds {
    unsigned count;
    int lost;
    int fd[FAB__PROTO_FDS_MAX];
} fab__fds_t;

static void fab__fds_close(fab__fds_t *fds)
{
    for (unsigned i = 0; i < fds->count; i++)
        close(fds->fd[i]);
    fds->count = 0;
}

/* Give back an imported reference that no region holds (its reply came too
 * late, or without its fd): its id rides on the next request, as a
 * released import's does, or goes out with a RELEASE once the queue is full. */
static void fab__release_later(fab_client_t *client, uint64_t id)
{
    if (client->sock < 0)
        return; /* the daemon that broke the connection dropped it */
    if (client->nreleases == FAB__PROTO_RELEASES_MAX)
        fab__release_send(client, id);
    else
        client->releases[client->nreleases++] = id;
}

/* A reply read out of turn: a RELEASE's, or that of a call that timed out.
 * A reference the late reply handed out is given back at once (for
 * IMPORT_MANY, every one it handed out). */
static void fab__deferred_reply(fab_client_t *client, const fab__reply_t *reply, fab__fds_t *fds)
{
    fab__fds_close(fds);
    client->deferred--;
    if (reply->status != FAB_SUCCESS)
        return;
    if (reply->type == FAB__MSG_RELEASE && reply->u.release.unimported != 0)
        fab__warn_unimported(reply);
    if (reply->type == FAB__MSG_IMPORT_MANY) {
        for (unsigned i = 0; i < reply->u.import_many.count; i++) {
            if (reply->u.import_many.entries[i].status == FAB_SUCCESS)
                fab__release_later(client, reply->u.import_many.entries[i].memory.region);
        }
    } else if (fab__reply_region(reply) != 0) {
        fab__release_send(client, fab__reply_region(reply));
    }
}

/* Read one reply before deadline, with its fds; 1 read, 0 timed out, -1 the
 * connection broke (already dropped). Only an IMPORT_MANY reply brings more
 * than one fd: of another, the first is kept and the rest closed, and one
 * cut short with an fd in hand breaks the connection (no daemon sends
 * that). */
static int fab__reply_read(fab_client_t *client, int64_t deadline, fab__reply_t *reply_out,
                           fab__fds_t *fds)
{
    uint8_t buf[FAB__PROTO_MAX];
    /* A blocking receive bounded by SO_RCVTIMEO, set again only when what
     * is left of the deadline is well under it: a reply costs one system
     * call, not a poll and a receive. It may overshoot the deadline by
     * FAB__RCVTIMEO_SLACK_MS at most. */
    if (deadline >= 0) {
        int64_t left = deadline - fab__now_ms();
        if (left <= 0)
            return 0;
        if (left < client->rcvtimeo_ms - FAB__RCVTIMEO_SLACK_MS || client->rcvtimeo_ms == 0 ||
            left > client->rcvtimeo_ms + FAB__RCVTIMEO_SLACK_MS) {
            struct timeval tv = {(time_t)(left / 1000), (suseconds_t)(left % 1000) * 1000};
            if (setsockopt(client->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0)
                client->rcvtimeo_ms = (int)left;
        }
    }
    ssize_t n = fab__proto_recv_fds(client->sock, buf, fds->fd, &fds->count, &fds->lost, 0);
    if (n < 0 && errno == EINTR)
        return fab__reply_read(client, deadline, reply_out, fds);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return fab__reply_read(client, deadline, reply_out, fds); /* 0 once past it */
    bool decoded = n > 0 && fab__reply_decode(buf, (size_t)n, reply_out) == FAB_SUCCESS;
    /* Only IMPORT_MANY and MC_JOIN (the staging and shadow memfds) carry
     * more than one fd (the message list's reply fds). */
    bool several = decoded && fab__msg(reply_out->type)->reply_fds > 1;
    if (!decoded || (!several && fds->lost && fds->count > 0)) {
        if (n > 0)
            fab__fds_close(fds);
        fds->count = 0;
        fab__connection_lost(client);
        return -1;
    }
    while (!several && fds->count > 1)
        close(fds->fd[--fds->count]);
    return 1;
}

/* Read the replies of releases sent earlier; the caller holds the lock. */
static void fab__drain(fab_client_t *client)
{
    int64_t deadline = fab__deadline(client);
    while (client->deferred > 0 && client->sock >= 0) {
        fab__reply_t reply;
        fab__fds_t fds;
        int got = fab__reply_read(client, deadline, &reply, &fds);
        if (got == 0) {
            fab__log(FAB__LOG_WARN, "fabmemd did not answer within %d ms", client->timeout_ms);
            fab__connection_lost(client);
        }
        if (got <= 0)
            return;
        fab__deferred_reply(client, &reply, &fds);
    }
}

/* Send a request and wait for its reply; the caller holds client->lock. A
 * broken connection reads as SYSTEM_NOT_READY; so does a reply that does not
 * come before the deadline (the connection stays: that reply is read and
 * undone later). fd_out (may be NULL) takes the fd a successful reply
 * carried; one that could not be received (this process is out of fds) makes
 * the call OUT_OF_MEMORY, and what the daemon handed out with it is given
 * back. */
static fab_status_t fab__reply_await(fab_client_t *client, const fab__request_t *request,
                                     fab__reply_t *reply_out, int *fd_out);

/* The same with every fd the reply brought (IMPORT_MANY's: one per
 * successful import, and lost set when this process had no room for the
 * rest; the caller gives back what came without its fd). An error reply
 * brings none. */
static fab_status_t fab__reply_await_fds(fab_client_t *client, const fab__request_t *request,
                                         fab__reply_t *reply_out, fab__fds_t *fds_out);

/* Send a request (with the released ids that wait); flags FAB__REQUEST_WAITS
 * when nothing more goes out before its reply. 0, or -1: the connection
 * broke (dropped). */
static int fab__request_send(fab_client_t *client, fab__request_t *request, int fd_in,
                             uint8_t flags)
{
    uint8_t buf[FAB__PROTO_MAX];
    request->seq = ++client->seq;
    request->flags = flags;
    size_t len = fab__request_encode_releasing(client, request, buf);
    if (fab__proto_send(client->sock, buf, len, fd_in) != 0) {
        fab__connection_lost(client);
        return -1;
    }
    client->nreleases = 0;
    return 0;
}

static fab_status_t fab__call_raw(fab_client_t *client, fab__request_t *request, int fd_in,
                                  fab__reply_t *reply_out, int *fd_out)
{
    if (client->sock < 0 || fab__request_send(client, request, fd_in, FAB__REQUEST_WAITS) != 0)
        return FAB_ERROR_SYSTEM_NOT_READY;
    return fab__reply_await(client, request, reply_out, fd_out);
}

/* Wait for the reply to request, sent last or among the last (replies come
 * in order; those read out of turn are handled on the way). */
static fab_status_t fab__reply_await(fab_client_t *client, const fab__request_t *request,
                                     fab__reply_t *reply_out, int *fd_out)
{
    fab__fds_t fds = {0};
    fab_status_t status = fab__reply_await_fds(client, request, reply_out, &fds);
    int fd = fds.count > 0 ? fds.fd[0] : -1; /* never more than one but for IMPORT_MANY */
    if (fd_out != NULL)
        *fd_out = fd;
    else if (fd >= 0)
        close(fd);
    return status;
}

static fab_status_t fab__reply_await_fds(fab_client_t *client, const fab__request_t *request,
                                         fab__reply_t *reply_out, fab__fds_t *fds_out)
{
    int64_t deadline = fab__deadline(client);
    fds_out->count = 0;
    fds_out->lost = 0;
    /* The daemon answers in order: replies read out of turn come first. */
    for (;;) {
        fab__reply_t reply;
        fab__fds_t fds;
        int got = fab__reply_read(client, deadline, &reply, &fds);
        if (got < 0)
            return FAB_ERROR_SYSTEM_NOT_READY;
        if (got == 0) {
            fab__log(FAB__LOG_WARN, "fabmemd did not answer within %d ms (FABMEM_TIMEOUT_MS)",
                     client->timeout_ms);
            if (request->type == FAB__MSG_HELLO || request->type == FAB__MSG_ADOPT ||
                client->deferred >= FAB__DEFERRED_MAX)
                fab__connection_lost(client);
            else
                client->deferred++; /* its reply is read and undone later */
            return FAB_ERROR_SYSTEM_NOT_READY;
        }
        if (reply.seq != request->seq && client->deferred > 0) {
            fab__deferred_reply(client, &reply, &fds);
            if (client->sock < 0)
                return FAB_ERROR_SYSTEM_NOT_READY;
            continue;
        }
        if (reply.seq != request->seq || reply.type != request->type) {
            fab__fds_close(&fds);
            fab__connection_lost(client);
            return FAB_ERROR_SYSTEM_NOT_READY;
        }
        fab_status_t status = (fab_status_t)reply.status;
        if (status != FAB_SUCCESS) {
            fab__fds_close(&fds); /* an error hands out nothing */
            fds.lost = 0;
        }
        if (fds.lost && reply.type != FAB__MSG_IMPORT_MANY) {
            fab__log(FAB__LOG_WARN, "out of file descriptors: the daemon's reply lost its fd");
            fds.lost = 0;
            if (fab__reply_region(&reply) != 0)
                fab__release_send(client, fab__reply_region(&reply));
            if (status == FAB_SUCCESS)
                status = FAB_ERROR_OUT_OF_MEMORY;
        }
        *fds_out = fds;
        *reply_out = reply;
        return status;
    }
}

/* HELLO with our version; a daemon that refuses it (NOT_SUPPORTED) is
 * asked again, on the same connection, with version 6, the last before the
 * IMPORT reply said the memory's kind (libcuda then asks MC_JOIN as before),
 * and then with 5, the last before IMPORT_MANY: a version-5 daemon then
 * serves us, and import_many sends it single IMPORTs. */
static fab_status_t fab__hello(fab_client_t *client)
{
    static const uint32_t versions[] = {FAB__PROTO_VERSION, FAB__PROTO_VERSION_MEMORY_KIND - 1,
                                        FAB__PROTO_VERSION_IMPORT_MANY - 1};
    fab_status_t status = FAB_ERROR_NOT_SUPPORTED;
    for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
        fab__request_t hello = {.type = FAB__MSG_HELLO};
        hello.u.hello.version = versions[i];
        hello.u.hello.name_len = (uint8_t)strlen(client->node_name);
        memcpy(hello.u.hello.name, client->node_name, hello.u.hello.name_len);
        fab__reply_t reply;
        status = fab__call_raw(client, &hello, -1, &reply, NULL);
        if (status == FAB_SUCCESS) {
            client->node = reply.u.hello.node;
            client->proto = versions[i];
            if (versions[i] < FAB__PROTO_VERSION_IMPORT_MANY)
                fab__log(FAB__LOG_INFO, "fabmemd at %s speaks protocol %u: imports go one "
                         "request each", client->path, versions[i]);
            return FAB_SUCCESS;
        }
        if (status != FAB_ERROR_NOT_SUPPORTED || client->sock < 0)
            break;
    }
    return status;
}

/* Connect and say HELLO. A connection that breaks before HELLO is answered
 * (a daemon that was leaving on idle when we queued, or one that refused us
 * over a limit) is tried once more, starting a daemon if allowed. */
static fab_status_t fab__open(fab_client_t *client)
{
    for (int attempt = 0;; attempt++) {
        fab_status_t status;
        client->sock = fab__connect(client, &status);
        client->rcvtimeo_ms = 0; /* a new socket has none set */
        if (client->sock < 0)
            return status;
        status = fab__hello(client);
        if (status == FAB_SUCCESS)
            return FAB_SUCCESS;
        if (status == FAB_ERROR_NOT_SUPPORTED)
            fab__log(FAB__LOG_ERROR, "fabmemd at %s refused protocol version %u: it is another "
                     "fabmem's daemon; stop it (an autostarted one leaves when idle) or set "
                     "FABMEM_SOCKET to another path (docs/fabric.md, \"Versions\")",
                     client->path, FAB__PROTO_VERSION);
        if (client->sock >= 0) {
            close(client->sock); /* the daemon said no: no use asking again */
            client->sock = -1;
            return status;
        }
        if (attempt == 1) {
            fab__log(FAB__LOG_WARN, "fabmemd at %s closed the connection before HELLO was "
                     "answered (is this user over max_connections_per_uid?)", client->path);
            return FAB_ERROR_SYSTEM_NOT_READY;
        }
    }
}

/* Connect again and hand every live region to the (new) daemon. A region it
 * will not take keeps working here but has no daemon reference any more
 * (id 0): calls that name it answer INVALID_HANDLE. */
static fab_status_t fab__reconnect(fab_client_t *client)
{
    fab_status_t status = fab__open(client);
    if (status != FAB_SUCCESS)
        return status == FAB_ERROR_NOT_PERMITTED ? status : FAB_ERROR_SYSTEM_NOT_READY;
    for (int pass = 1; pass >= 0; pass--) {
        for (fab_region_t *r = client->regions; r != NULL; r = r->next) {
            if ((int)r->creator != pass)
                continue;
            fab__request_t adopt = {.type = FAB__MSG_ADOPT};
            adopt.u.import.device = r->device;
            adopt.u.import.handle = r->handle;
            adopt.u.import.handle_type = r->handle_type;
            adopt.u.import.creator = r->creator;
            if (r->creator)
                memcpy(adopt.u.import.token, r->token, sizeof(r->token));
            fab__reply_t reply;
            status = fab__call_raw(client, &adopt, r->fd, &reply, NULL);
            if (client->sock < 0)
                return FAB_ERROR_SYSTEM_NOT_READY;
            r->id = status == FAB_SUCCESS ? reply.u.import.region : 0;
            if (status != FAB_SUCCESS)
                fab__log(FAB__LOG_WARN, "the restarted fabmemd did not take a region back: %s",
                         fab_status_name(status));
        }
    }
    fab__log(FAB__LOG_INFO, "reconnected to fabmemd at %s", client->path);
    return FAB_SUCCESS;
}

/* A request with reconnection: a broken connection is replaced (once) and
 * the request sent again. A request about a region (EXPORT) is rebuilt from
 * the region, whose id the new daemon gave anew; one whose region the new
 * daemon did not take back answers INVALID_HANDLE. */
static fab_status_t fab__call(fab_client_t *client, fab__request_t *request,
                              const fab_region_t *region, fab__reply_t *reply_out, int *fd_out)
{
    for (int attempt = 0;; attempt++) {
        int fresh = client->sock < 0;
        if (fresh) {
            fab_status_t status = fab__reconnect(client);
            if (status != FAB_SUCCESS)
                return status;
        }
        if (region != NULL) {
            if (region->id == 0)
                return FAB_ERROR_INVALID_HANDLE;
            request->u.region.region = region->id;
        }
        fab_status_t status = fab__call_raw(client, request, -1, reply_out, fd_out);
        if (client->sock >= 0 || fresh || attempt == 1)
            return status;
    }
}

static int fab__timeout_from_env(void)
{
    const char *text = getenv(FAB__ENV_TIMEOUT_MS);
    if (text == NULL || *text == '\0')
        return FAB__TIMEOUT_DEFAULT_MS;
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || *end != '\0' || v < 0 || v > INT32_MAX) {
        fab__log(FAB__LOG_WARN, "FABMEM_TIMEOUT_MS=%s is not a number of ms; using %d", text,
                 FAB__TIMEOUT_DEFAULT_MS);
        return FAB__TIMEOUT_DEFAULT_MS;
    }
    return (int)v;
}

/* This process's id without a system call per check: read once, and again
 * in the child of every fork() (pthread_atfork). A child made some other way
 * (a raw clone, or vfork without exec) would pass for its parent: the check
 * is a guard against the common mistake, not a wall. */
static pid_t fab__pid;
static pthread_once_t fab__pid_once = PTHREAD_ONCE_INIT;

static void fab__pid_after_fork(void)
{
    fab__pid = getpid();
}

static void fab__pid_init(void)
{
    fab__pid = getpid();
    (void)pthread_atfork(NULL, NULL, fab__pid_after_fork);
}

static pid_t fab__self(void)
{
    pthread_once(&fab__pid_once, fab__pid_init);
    return fab__pid;
}

/* Whether the calling process may use client: the one that connected it. */
static bool fab__owned(const fab_client_t *client)
{
    if (client->pid == fab__self())
        return true;
    fab__log(FAB__LOG_ERROR, "a fabmem client was used in a child after fork(): "
             "connect a new one in the child");
    return false;
}

fab_status_t fab_client_connect(const fab_client_options_t *options, fab_client_t **client_out)
{
    if (client_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    fab_client_options_t none = {NULL, NULL, -1};
    if (options == NULL)
        options = &none;
    char path[PATH_MAX];
    if (fab__socket_path(options->socket_path, path, sizeof(path)) != 0)
        return FAB_ERROR_INVALID_VALUE;
    int autostart = options->autostart;
    if (autostart < 0) {
        const char *no = getenv(FAB__ENV_NO_AUTOSTART);
        autostart = !(no != NULL && strcmp(no, "1") == 0);
    }
    const char *node = options->node;
    if (node == NULL)
        node = getenv(FAB__ENV_NODE);
    if (node == NULL)
        node = "";
    if (strlen(node) > 255)
        return FAB_ERROR_NOT_FOUND;

    fab_client_t *client = calloc(1, sizeof(*client));
    if (client == NULL)
        return FAB_ERROR_OUT_OF_MEMORY;
    fab_status_t status = FAB_ERROR_OUT_OF_MEMORY;
    if (pthread_mutex_init(&client->lock, NULL) != 0)
        goto fail_client;
    client->pid = fab__self();
    client->timeout_ms = fab__timeout_from_env();
    client->autostart = autostart;
    snprintf(client->node_name, sizeof(client->node_name), "%s", node);
    snprintf(client->path, sizeof(client->path), "%s", path);
    status = fab__open(client);
    if (status != FAB_SUCCESS) {
        fab__log(FAB__LOG_INFO, "no fabmemd answers at %s: %s", path, fab_status_name(status));
        goto fail_lock;
    }
    *client_out = client;
    return FAB_SUCCESS;

fail_lock:
    pthread_mutex_destroy(&client->lock);
fail_client:
    free(client);
    return status;
}

void fab__client_flush(fab_client_t *client)
{
    if (client == NULL || !fab__owned(client))
        return;
    pthread_mutex_lock(&client->lock);
    fab__drain(client);
    pthread_mutex_unlock(&client->lock);
}

fab_status_t fab_client_close(fab_client_t *client)
{
    if (client == NULL)
        return FAB_SUCCESS;
    if (!fab__owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    pthread_mutex_lock(&client->lock);
    if (client->live_regions != 0) {
        pthread_mutex_unlock(&client->lock);
        return FAB_ERROR_ILLEGAL_STATE;
    }
    fab__drain(client); /* for the warnings they may carry */
    if (client->sock >= 0)
        close(client->sock);
    client->sock = -1;
    pthread_mutex_unlock(&client->lock);
    pthread_mutex_destroy(&client->lock);
    fab_topology_destroy(client->topology);
    for (size_t i = 0; i < client->noutdated; i++)
        fab_topology_destroy(client->outdated[i]);
    free(client->outdated);
    free(client);
    return FAB_SUCCESS;
}

int fab_client_node_index(const fab_client_t *client)
{
    return client ? client->node : -1;
}

/* ---- regions --------------------------------------------------------------- */

static fab_region_t *fab__region_new(fab_client_t *client, const fab__reply_memory_t *reply, int fd,
                                     fab_access_t access)
{
    fab_region_t *region = calloc(1, sizeof(*region));
    if (region == NULL)
        return NULL;
    region->next = client->regions;
    if (client->regions != NULL)
        client->regions->prev = region;
    client->regions = region;
    region->client = client;
    region->id = reply->region;
    region->fd = fd;
    region->size = (size_t)reply->size;
    region->access = access;
    region->uuid = reply->uuid;
    region->device = reply->device;
    region->refs = 1;
    return region;
}

/* Send a request whose reply hands out memory (ALLOC: creator, IMPORT: not)
 * and wrap the memfd that came with it in a new region. If the reply carries
 * no fd, or there is no memory for the region, the daemon's reference is
 * dropped again so that nothing leaks on either side. Called with the lock
 * held; *region_out is written only on success. */
static fab_status_t fab__region_from_reply(fab_client_t *client, const fab__request_t *request,
                                           const fab__reply_t *reply, int fd, bool creator,
                                           fab_region_t **region_out);

static fab_status_t fab__call_for_region(fab_client_t *client, fab__request_t *request,
                                         bool creator, fab_region_t **region_out)
{
    fab__reply_t reply;
    int fd = -1;
    fab_status_t status = fab__call(client, request, NULL, &reply, &fd);
    if (status != FAB_SUCCESS)
        return status;
    return fab__region_from_reply(client, request, &reply, fd, creator, region_out);
}

/* The region a successful ALLOC or IMPORT reply (and its fd) hands out; see
 * fab__call_for_region. */
/* The region for memory a reply handed out with fd; NULL on no memory. */
static fab_region_t *fab__region_for(fab_client_t *client, const fab__reply_memory_t *memory,
                                     int fd, bool creator)
{
    /* The creator may do anything with its memory; an importer what it was
     * granted. */
    fab_access_t access = creator || memory->access == FAB_ACCESS_READ_WRITE
                              ? FAB_ACCESS_READ_WRITE
                              : FAB_ACCESS_READ_ONLY;
    fab_region_t *region = fab__region_new(client, memory, fd, access);
    if (region != NULL)
        region->creator = creator;
    return region;
}

static fab_status_t fab__region_from_reply(fab_client_t *client, const fab__request_t *request,
                                           const fab__reply_t *reply, int fd, bool creator,
                                           fab_region_t **region_out)
{
    const fab__reply_memory_t *memory = creator ? &reply->u.alloc.memory : &reply->u.import;
    fab_region_t *region = fd >= 0 ? fab__region_for(client, memory, fd, creator) : NULL;
    if (region == NULL) {
        if (fd >= 0)
            close(fd);
        if (client->sock >= 0)
            fab__release_send(client, memory->region);
        return fd >= 0 ? FAB_ERROR_OUT_OF_MEMORY : FAB_ERROR_SYSTEM_NOT_READY;
    }
    if (creator) {
        region->handle = reply->u.alloc.handle;
        region->handle_type = request->u.alloc.handle_type;
        memcpy(region->token, reply->u.alloc.token, sizeof(region->token));
    } else {
        region->handle = request->u.import.handle;
        region->kind = reply->u.import.kind;
    }
    client->live_regions++;
    *region_out = region;
    return FAB_SUCCESS;
}

fab_status_t fab_client_allocate(fab_client_t *client, const fab_alloc_props_t *props,
                                 fab_region_t **region_out)
{
    if (client == NULL || props == NULL || region_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    if (!fab__owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    fab__request_t request = {.type = FAB__MSG_ALLOC};
    request.u.alloc.device = props->device_ordinal;
    request.u.alloc.size = props->size;
    request.u.alloc.handle_type = (uint32_t)props->handle_type;
    if ((unsigned)props->peer_access > FAB_ACCESS_READ_WRITE)
        return FAB_ERROR_INVALID_VALUE;
    request.u.alloc.peer_access = (uint8_t)props->peer_access;
    pthread_mutex_lock(&client->lock);
    fab_status_t status = fab__call_for_region(client, &request, true, region_out);
    pthread_mutex_unlock(&client->lock);
    return status;
}

fab_status_t fab_client_import(fab_client_t *client, const fab_handle_t *handle,
                               int device_ordinal, fab_region_t **region_out)
{
    if (client == NULL || handle == NULL || region_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    if (!fab__owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    fab__request_t request = {.type = FAB__MSG_IMPORT};
    request.u.import.device = device_ordinal;
    request.u.import.handle = *handle;
    pthread_mutex_lock(&client->lock);
    fab_status_t status = fab__call_for_region(client, &request, false, region_out);
    pthread_mutex_unlock(&client->lock);
    return status;
}

/* IMPORTs in flight at once when fab_client_import_many talks to a
 * version-5 daemon: with the RELEASE replies that may wait unread
 * (FAB__DEFERRED_MAX), about what the daemon's small send buffer holds for
 * one connection. */
#define FAB__IMPORT_BATCH 8

/* k (at most FAB__IMPORT_BATCH) ordinary IMPORTs sent together, for a
 * daemon without IMPORT_MANY; the caller holds the lock and a connection. */
static void fab__import_pipelined(fab_client_t *client, const fab_handle_t *handles, size_t k,
                                  int device, fab_region_t **regions_out, fab_status_t *statuses)
{
    fab__request_t requests[FAB__IMPORT_BATCH];
    size_t sent = 0;
    /* All k go out before the first reply is read; only the last says
     * WAITS, so the daemon answers them all in one wakeup. */
    for (; sent < k; sent++) {
        fab__request_t *request = &requests[sent];
        memset(request, 0, offsetof(fab__request_t, releases));
        request->type = FAB__MSG_IMPORT;
        request->u.import.device = device;
        request->u.import.handle = handles[sent];
        if (fab__request_send(client, request, -1, sent + 1 == k ? FAB__REQUEST_WAITS : 0) != 0)
            break;
    }
    for (size_t j = 0; j < k; j++) {
        fab_status_t status = FAB_ERROR_SYSTEM_NOT_READY;
        regions_out[j] = NULL;
        if (j < sent && client->sock >= 0) {
            fab__reply_t reply;
            int fd = -1;
            status = fab__reply_await(client, &requests[j], &reply, &fd);
            if (status == FAB_SUCCESS) {
                status = fab__region_from_reply(client, &requests[j], &reply, fd, false,
                                                &regions_out[j]);
            } else if (status == FAB_ERROR_SYSTEM_NOT_READY && client->sock >= 0) {
                /* Timed out: the replies still to come are read and undone
                 * later, as that one's is. */
                for (size_t m = j + 1; m < sent && client->sock >= 0; m++) {
                    if (client->deferred >= FAB__DEFERRED_MAX)
                        fab__connection_lost(client);
                    else
                        client->deferred++;
                }
                sent = j + 1;
            }
        }
        statuses[j] = status;
    }
}

/* One IMPORT_MANY of k handles (1..FAB__IMPORT_MANY_MAX): one request, one
 * reply with an entry and, for each import that succeeded, an fd, in order.
 * The caller holds the lock and a connection to a version-6 daemon. A reply
 * that breaks the protocol (another count, more successes than fds with
 * none lost, or more fds than successes) breaks the connection, which drops
 * what it handed out; an import whose fd this process had no room for is
 * OUT_OF_MEMORY and its reference given back, as fab_client_import's. */
static void fab__import_batch(fab_client_t *client, const fab_handle_t *handles, size_t k,
                              int device, fab_region_t **regions_out, fab_status_t *statuses)
{
    fab__request_t request;
    memset(&request, 0, offsetof(fab__request_t, releases));
    request.type = FAB__MSG_IMPORT_MANY;
    request.u.import_many.device = device;
    request.u.import_many.count = (uint8_t)k;
    memcpy(request.handles, handles, k * sizeof(handles[0]));
    fab__reply_t reply;
    fab__fds_t fds = {0};
    fab_status_t status = FAB_ERROR_SYSTEM_NOT_READY;
    if (fab__request_send(client, &request, -1, FAB__REQUEST_WAITS) == 0)
        status = fab__reply_await_fds(client, &request, &reply, &fds);
    if (status == FAB_SUCCESS) {
        unsigned made = 0;
        for (unsigned i = 0; i < reply.u.import_many.count; i++)
            made += reply.u.import_many.entries[i].status == FAB_SUCCESS;
        if (reply.u.import_many.count != k || made < fds.count || (made > fds.count && !fds.lost)) {
            fab__log(FAB__LOG_WARN, "fabmemd answered %zu imports with %u entries, %u of them "
                     "made, and %u fds: dropping the connection", k, reply.u.import_many.count,
                     made, fds.count);
            fab__fds_close(&fds);
            fab__connection_lost(client);
            status = FAB_ERROR_SYSTEM_NOT_READY;
        } else if (made > fds.count) {
            fab__log(FAB__LOG_WARN, "out of file descriptors: the daemon's reply lost %u of its "
                     "%u fds", made - fds.count, made);
        }
    }
    unsigned next = 0; /* the next fd to hand to a region */
    for (size_t i = 0; i < k; i++) {
        regions_out[i] = NULL;
        if (status != FAB_SUCCESS) {
            statuses[i] = status;
            continue;
        }
        const fab__reply_memory_t *memory = &reply.u.import_many.entries[i].memory;
        statuses[i] = (fab_status_t)reply.u.import_many.entries[i].status;
        if (statuses[i] != FAB_SUCCESS)
            continue;
        fab_region_t *region = NULL;
        if (next < fds.count) {
            int fd = fds.fd[next++];
            region = fab__region_for(client, memory, fd, false);
            if (region == NULL)
                close(fd);
        }
        if (region == NULL) {
            fab__release_later(client, memory->region);
            statuses[i] = FAB_ERROR_OUT_OF_MEMORY;
            continue;
        }
        region->handle = handles[i];
        client->live_regions++;
        regions_out[i] = region;
    }
}

fab_status_t fab_client_import_many(fab_client_t *client, const fab_handle_t *handles,
                                    size_t count, int device_ordinal, fab_region_t **regions_out,
                                    fab_status_t *statuses_out)
{
    if (client == NULL || (count != 0 && (handles == NULL || regions_out == NULL)))
        return FAB_ERROR_INVALID_VALUE;
    if (!fab__owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    fab_status_t first = FAB_SUCCESS;
    pthread_mutex_lock(&client->lock);
    for (size_t done = 0; done < count;) {
        fab_status_t statuses[FAB__IMPORT_MANY_MAX];
        bool up = client->sock >= 0 || fab__reconnect(client) == FAB_SUCCESS;
        bool batch = up && client->proto >= FAB__PROTO_VERSION_IMPORT_MANY;
        size_t most = batch ? FAB__IMPORT_MANY_MAX : FAB__IMPORT_BATCH;
        size_t k = count - done < most ? count - done : most;
        if (batch)
            fab__import_batch(client, handles + done, k, device_ordinal, regions_out + done,
                              statuses);
        else if (up)
            fab__import_pipelined(client, handles + done, k, device_ordinal, regions_out + done,
                                  statuses);
        for (size_t j = 0; j < k; j++) {
            if (!up) {
                regions_out[done + j] = NULL;
                statuses[j] = FAB_ERROR_SYSTEM_NOT_READY;
            }
            if (statuses_out != NULL)
                statuses_out[done + j] = statuses[j];
            if (statuses[j] != FAB_SUCCESS && first == FAB_SUCCESS)
                first = statuses[j];
        }
        done += k;
    }
    pthread_mutex_unlock(&client->lock);
    return first;
}

fab_status_t fab_client_stats(fab_client_t *client, fab_daemon_stats_t *stats_out)
{
    if (client == NULL || stats_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    if (!fab__owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    fab__request_t request = {.type = FAB__MSG_STATS};
    fab__reply_t reply;
    pthread_mutex_lock(&client->lock);
    fab_status_t status = fab__call(client, &request, NULL, &reply, NULL);
    pthread_mutex_unlock(&client->lock);
    if (status != FAB_SUCCESS)
        return status;
    const fab__stats_t *st = &reply.u.stats;
    *stats_out = (fab_daemon_stats_t){.pid = st->pid,
                                      .clients = st->clients,
                                      .allocations = st->allocations,
                                      .references = st->references,
                                      .bytes = st->bytes,
                                      .rss = st->rss};
    return FAB_SUCCESS;
}

fab_status_t fab_client_verify(fab_client_t *client, const fab_handle_t *handle, bool *live_out)
{
    if (client == NULL || handle == NULL || live_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    if (!fab__owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    fab__request_t request = {.type = FAB__MSG_VERIFY};
    request.u.import.handle = *handle;
    fab__reply_t reply;
    pthread_mutex_lock(&client->lock);
    fab_status_t status = fab__call(client, &request, NULL, &reply, NULL);
    pthread_mutex_unlock(&client->lock);
    if (status != FAB_SUCCESS)
        return status;
    *live_out = reply.u.verify.live != 0;
    return FAB_SUCCESS;
}

/* Ask the daemon for every node of its topology; the caller holds the lock. */
static fab_status_t fab__topology_fetch(fab_client_t *client, fab_topology_t **topology_out)
{
    fab_topology_t *topology = calloc(1, sizeof(*topology));
    if (topology == NULL)
        return FAB_ERROR_OUT_OF_MEMORY;
    fab_status_t status = FAB_SUCCESS;
    for (uint32_t i = 0; status == FAB_SUCCESS && (i == 0 || i < (uint32_t)topology->nnodes); i++) {
        fab__request_t request = {.type = FAB__MSG_TOPOLOGY};
        request.u.topology.node = i;
        fab__reply_t reply;
        status = fab__call(client, &request, NULL, &reply, NULL);
        if (status != FAB_SUCCESS)
            break;
        if (i == 0) {
            /* A node count the protocol cannot have sent is a broken daemon. */
            status = FAB_ERROR_SYSTEM_NOT_READY;
            if (reply.u.topology.node_count == 0 || reply.u.topology.node_count > INT32_MAX)
                break;
            topology->nodes = calloc(reply.u.topology.node_count, sizeof(*topology->nodes));
            status = FAB_ERROR_OUT_OF_MEMORY;
            if (topology->nodes == NULL)
                break;
            status = FAB_SUCCESS;
            topology->nnodes = (int)reply.u.topology.node_count;
            topology->driver_version = (int)reply.u.topology.driver_version;
        }
        topology->nodes[i] = reply.u.topology.node;
    }
    if (status != FAB_SUCCESS) {
        fab_topology_destroy(topology);
        return status;
    }
    *topology_out = topology;
    return FAB_SUCCESS;
}

fab_status_t fab_client_topology(fab_client_t *client, const fab_topology_t **topology_out)
{
    if (client == NULL || topology_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    if (!fab__owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    pthread_mutex_lock(&client->lock);
    fab_status_t status = FAB_SUCCESS;
    if (client->topology == NULL || client->topology_stale || client->sock < 0) {
        /* Callers may still read the one they had: it lives until close. */
        fab_topology_t **grown = NULL;
        if (client->topology != NULL) {
            grown = realloc(client->outdated, (client->noutdated + 1) * sizeof(*grown));
            if (grown == NULL)
                status = FAB_ERROR_OUT_OF_MEMORY;
            else
                client->outdated = grown;
        }
        fab_topology_t *topology = NULL;
        if (status == FAB_SUCCESS)
            status = fab__topology_fetch(client, &topology);
        if (status == FAB_SUCCESS) {
            if (client->topology != NULL)
                client->outdated[client->noutdated++] = client->topology;
            client->topology = topology;
            client->topology_stale = false;
        }
    }
    if (status == FAB_SUCCESS)
        *topology_out = client->topology;
    pthread_mutex_unlock(&client->lock);
    return status;
}

fab_status_t fab_region_export(fab_region_t *region, fab_handle_t *handle_out)
{
    if (region == NULL || handle_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    fab_client_t *client = region->client;
    if (!fab__owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    pthread_mutex_lock(&client->lock);
    fab_status_t status = FAB_ERROR_INVALID_HANDLE;
    if (!region->released) {
        fab__request_t request = {.type = FAB__MSG_EXPORT};
        fab__reply_t reply;
        status = fab__call(client, &request, region, &reply, NULL);
        if (status == FAB_SUCCESS)
            *handle_out = reply.u.exported.handle;
    }
    pthread_mutex_unlock(&client->lock);
    return status;
}

int fab_region_fd(const fab_region_t *region)
{
    return region ? region->fd : -1;
}

size_t fab_region_size(const fab_region_t *region)
{
    return region ? region->size : 0;
}

fab_access_t fab_region_access(const fab_region_t *region)
{
    return region ? region->access : FAB_ACCESS_NONE;
}

fab_uuid_t fab_region_uuid(const fab_region_t *region)
{
    fab_uuid_t none = {{0}};
    return region ? region->uuid : none;
}

int fab_region_device_ordinal(const fab_region_t *region)
{
    return region ? region->device : -1;
}

bool fab__region_maybe_mc_token(const fab_region_t *region)
{
    return region != NULL && region->kind != FAB__MEMORY_PLAIN;
}

fab_status_t fab_region_map(fab_region_t *region, fab_access_t access, void **addr_out)
{
    if (region == NULL || addr_out == NULL || !fab_access_is_mappable(access))
        return FAB_ERROR_INVALID_VALUE;
    if (access == FAB_ACCESS_READ_WRITE && region->access != FAB_ACCESS_READ_WRITE)
        return FAB_ERROR_NOT_PERMITTED;
    fab_client_t *client = region->client;
    if (!fab__owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    pthread_mutex_lock(&client->lock);
    fab_status_t status = FAB_ERROR_INVALID_VALUE;
    if (region->released)
        goto out;
    status = FAB_ERROR_OUT_OF_MEMORY;
    if (region->nmaps == region->capmaps) {
        size_t cap = region->capmaps ? region->capmaps * 2 : 2;
        void **grown = realloc(region->maps, cap * sizeof(*grown));
        if (grown == NULL)
            goto out;
        region->maps = grown;
        region->capmaps = cap;
    }
    int prot = access == FAB_ACCESS_READ_WRITE ? PROT_READ | PROT_WRITE : PROT_READ;
    void *addr = mmap(NULL, region->size, prot, MAP_SHARED, region->fd, 0);
    if (addr == MAP_FAILED) {
        fab__log(FAB__LOG_WARN, "mmap of %zu bytes: %s", region->size, strerror(errno));
        goto out;
    }
    region->maps[region->nmaps++] = addr;
    region->refs++;
    *addr_out = addr;
    status = FAB_SUCCESS;
out:
    pthread_mutex_unlock(&client->lock);
    return status;
}

/* The last put: drop the daemon's reference and free the region; the caller
 * holds the lock. */
static void fab__region_free(fab_region_t *region)
{
    fab_client_t *client = region->client;
    if (client->deferred >= FAB__DEFERRED_MAX)
        fab__drain(client);
    if (region->prev != NULL)
        region->prev->next = region->next;
    else
        client->regions = region->next;
    if (region->next != NULL)
        region->next->prev = region->prev;
    /* A broken connection is not mended here: the daemon that broke it
     * holds nothing of ours, and a new one learns of live regions only (so
     * no stale id is ever sent to it). */
    if (client->sock >= 0 && region->id != 0) {
        if (region->creator || client->nreleases == FAB__PROTO_RELEASES_MAX)
            fab__release_send(client, region->id);
        else
            client->releases[client->nreleases++] = region->id;
    }
    close(region->fd);
    client->live_regions--;
    free(region->maps);
    free(region);
}

static void fab__region_put(fab_region_t *region)
{
    if (--region->refs == 0)
        fab__region_free(region);
}

fab_status_t fab_region_unmap(fab_region_t *region, void *addr)
{
    if (region == NULL || addr == NULL)
        return FAB_ERROR_INVALID_VALUE;
    fab_client_t *client = region->client;
    if (!fab__owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    pthread_mutex_lock(&client->lock);
    fab_status_t status = FAB_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < region->nmaps; i++) {
        if (region->maps[i] != addr)
            continue;
        munmap(addr, region->size);
        region->maps[i] = region->maps[--region->nmaps];
        status = FAB_SUCCESS;
        fab__region_put(region);
        break;
    }
    pthread_mutex_unlock(&client->lock);
    return status;
}

fab_status_t fab_region_release(fab_region_t *region)
{
    if (region == NULL)
        return FAB_ERROR_INVALID_VALUE;
    fab_client_t *client = region->client;
    if (!fab__owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    pthread_mutex_lock(&client->lock);
    fab_status_t status = FAB_SUCCESS;
    if (region->released) {
        status = FAB_ERROR_INVALID_VALUE;
    } else {
        region->released = true;
        fab__region_put(region);
    }
    pthread_mutex_unlock(&client->lock);
    return status;
}

/* ---- legacy CUDA IPC (ipc.h) -------------------------------------------------- */

/* One IPC request: connect again first if the connection broke (nothing
 * published on the old one survives; the daemon dropped it), never resend:
 * a publish the daemon may have taken must not be taken twice. */
static fab_status_t fab__ipc_call(fab_client_t *client, fab__request_t *request, int fd_in,
                                  fab__reply_t *reply, int *fd_out)
{
    if (!fab__owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    pthread_mutex_lock(&client->lock);
    fab_status_t status = FAB_SUCCESS;
    if (client->sock < 0)
        status = fab__reconnect(client);
    if (status == FAB_SUCCESS) {
        fab__drain(client);
        status = fab__call_raw(client, request, fd_in, reply, fd_out);
    }
    pthread_mutex_unlock(&client->lock);
    return status;
}

fab_status_t fab__client_ipc_publish(fab_client_t *client, uint8_t kind, int device,
                                     uint64_t size, int fd, uint8_t out[FAB__IPC_HANDLE_BYTES])
{
    if (client == NULL || out == NULL || fd < 0)
        return FAB_ERROR_INVALID_VALUE;
    fab__request_t request = {.type = FAB__MSG_IPC_PUBLISH};
    request.u.ipc_publish.kind = kind;
    request.u.ipc_publish.device = device;
    request.u.ipc_publish.size = size;
    fab__reply_t reply;
    fab_status_t status = fab__ipc_call(client, &request, fd, &reply, NULL);
    if (status == FAB_SUCCESS)
        memcpy(out, reply.u.ipc_publish.bytes, FAB__IPC_HANDLE_BYTES);
    return status;
}

fab_status_t fab__client_ipc_open(fab_client_t *client, const uint8_t handle[FAB__IPC_HANDLE_BYTES],
                                  int *fd_out, uint8_t *kind_out, int *device_out,
                                  uint64_t *size_out)
{
    if (client == NULL || handle == NULL || fd_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    fab__request_t request = {.type = FAB__MSG_IPC_OPEN};
    memcpy(request.u.ipc.bytes, handle, FAB__IPC_HANDLE_BYTES);
    fab__reply_t reply;
    int fd = -1;
    fab_status_t status = fab__ipc_call(client, &request, -1, &reply, &fd);
    if (status == FAB_SUCCESS && fd < 0)
        status = FAB_ERROR_SYSTEM_NOT_READY; /* a reply without its memfd */
    if (status != FAB_SUCCESS) {
        if (fd >= 0)
            close(fd);
        return status;
    }
    *fd_out = fd;
    if (kind_out != NULL)
        *kind_out = reply.u.ipc_open.kind;
    if (device_out != NULL)
        *device_out = reply.u.ipc_open.device;
    if (size_out != NULL)
        *size_out = reply.u.ipc_open.size;
    return FAB_SUCCESS;
}

fab_status_t fab__client_ipc_withdraw(fab_client_t *client,
                                      const uint8_t handle[FAB__IPC_HANDLE_BYTES])
{
    if (client == NULL || handle == NULL)
        return FAB_ERROR_INVALID_VALUE;
    fab__request_t request = {.type = FAB__MSG_IPC_WITHDRAW};
    memcpy(request.u.ipc.bytes, handle, FAB__IPC_HANDLE_BYTES);
    fab__reply_t reply;
    return fab__ipc_call(client, &request, -1, &reply, NULL);
}

/* ---- multicast teams (multicast.h) ------------------------------------------------ */

fab_status_t fab__client_mc(fab_client_t *client, fab__request_t *request, fab_region_t *region,
                            int fd_in, fab__reply_t *reply_out, int fds_out[2],
                            unsigned *nfds_out)
{
    if (client == NULL || request == NULL || reply_out == NULL || fds_out == NULL ||
        nfds_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    *nfds_out = 0;
    if (!fab__owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    pthread_mutex_lock(&client->lock);
    fab_status_t status = FAB_SUCCESS;
    /* A team is the connection's: reconnecting would not bring it back,
     * and resending could join or bind twice. */
    if (client->sock < 0)
        status = fab__reconnect(client);
    if (status == FAB_SUCCESS && region != NULL) {
        request->u.mc.id = region->id;
        if (region->id == 0)
            status = FAB_ERROR_INVALID_VALUE;
    }
    fab__fds_t fds = {0};
    if (status == FAB_SUCCESS) {
        fab__drain(client);
        if (fab__request_send(client, request, fd_in, FAB__REQUEST_WAITS) != 0)
            status = FAB_ERROR_SYSTEM_NOT_READY;
        else
            status = fab__reply_await_fds(client, request, reply_out, &fds);
    }
    pthread_mutex_unlock(&client->lock);
    if (status == FAB_SUCCESS && fds.lost)
        status = FAB_ERROR_OUT_OF_MEMORY; /* the member's memfds did not all come */
    if (status != FAB_SUCCESS || fds.count > 2) {
        fab__fds_close(&fds);
        return status == FAB_SUCCESS ? FAB_ERROR_SYSTEM_NOT_READY : status;
    }
    for (unsigned i = 0; i < fds.count; i++)
        fds_out[i] = fds.fd[i];
    *nfds_out = fds.count;
    return FAB_SUCCESS;
}

/* ---- field faults (src/fabric/client_fault.h) ------------------------------------------- */

fab_status_t fab__client_fault(fab_client_t *client, uint8_t op, uint8_t key, uint32_t target,
                               int32_t value)
{
    if (client == NULL)
        return FAB_ERROR_INVALID_VALUE;
    if (!fab__owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    fab__request_t request = {.type = FAB__MSG_FAULT};
    request.u.fault.op = op;
    request.u.fault.key = key;
    request.u.fault.target = target;
    request.u.fault.value = value;
    fab__reply_t reply;
    pthread_mutex_lock(&client->lock);
    fab_status_t status = fab__call(client, &request, NULL, &reply, NULL);
    pthread_mutex_unlock(&client->lock);
    return status;
}

/* Whether two records of one node differ in what a fault can change: the
 * fabric state and the attributes (where fabric_manager, imex and
 * gpus_isolated are kept). */
static bool fab__node_faults_differ(const fab__node_t *a, const fab__node_t *b)
{
    if (a->info.fabric_state != b->info.fabric_state || a->nattributes != b->nattributes)
        return true;
    for (unsigned i = 0; i < a->nattributes; i++) {
        bool found = false;
        for (unsigned j = 0; j < b->nattributes && !found; j++)
            found = a->attributes[i].id == b->attributes[j].id &&
                    a->attributes[i].value == b->attributes[j].value;
        if (!found)
            return true;
    }
    return false;
}

fab_status_t fab__client_topology_refresh(fab_client_t *client, const fab_topology_t **topology_out,
                                          bool *changed_out)
{
    if (changed_out != NULL)
        *changed_out = false;
    const fab_topology_t *topology;
    fab_status_t status = fab_client_topology(client, &topology);
    if (status != FAB_SUCCESS)
        return status;
    fab__request_t request = {.type = FAB__MSG_TOPOLOGY};
    request.u.topology.node = (uint32_t)client->node;
    fab__reply_t reply;
    pthread_mutex_lock(&client->lock);
    status = fab__call(client, &request, NULL, &reply, NULL);
    if (status == FAB_SUCCESS && client->topology == topology &&
        (client->node < 0 || client->node >= topology->nnodes ||
         fab__node_faults_differ(&topology->nodes[client->node], &reply.u.topology.node)))
        client->topology_stale = true; /* fab_client_topology fetches it anew */
    pthread_mutex_unlock(&client->lock);
    if (status != FAB_SUCCESS)
        return status;
    const fab_topology_t *now;
    status = fab_client_topology(client, &now);
    if (status != FAB_SUCCESS)
        return status;
    if (changed_out != NULL)
        *changed_out = now != topology;
    *topology_out = now;
    return FAB_SUCCESS;
}
