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
#include "src/base/hot.h"
#include "src/fabric/fabmemd.h"
#include "src/fabric/client_impl.h"
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

/* ---- the connection ---- */

/* The queued released ids left the queue (sent, or dropped with the
 * connection): forget them, and close the fds that waited with them. */
static void fab__client_releases_gone(fab_client_t *client)
{
    client->nreleases = 0;
    while (client->nclosing > 0)
        close(client->closing[--client->nclosing]);
}

void fab__client_connection_lost(fab_client_t *client)
{
    fab__log(FAB__LOG_WARN, "lost the connection to fabmemd");
    close(client->sock);
    client->sock = -1;
    client->deferred = 0;
    fab__client_releases_gone(client); /* the daemon that held them dropped them */
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
void fab__client_release_send(fab_client_t *client, uint64_t id)
{
    fab__request_t request;
    memset(&request, 0, offsetof(fab__request_t, releases)); /* the ids: as many as carried */
    request.type = FAB__MSG_RELEASE;
    request.seq = ++client->seq;
    request.u.region.region = id;
    uint8_t buf[FAB__PROTO_MAX];
    size_t len = fab__request_encode_releasing(client, &request, buf);
    if (fab__proto_send(client->sock, buf, len, -1) == 0) {
        fab__client_releases_gone(client);
        client->deferred++;
    } else {
        fab__client_connection_lost(client);
    }
}


void fab__client_fds_close(fab__fds_t *fds)
{
    for (unsigned i = 0; i < fds->count; i++)
        close(fds->fd[i]);
    fds->count = 0;
}

/* Give back an imported reference that no region holds (its reply came too
 * late, or without its fd): its id rides on the next request, as a
 * released import's does, or goes out with a RELEASE once the queue is full. */
void fab__client_release_later(fab_client_t *client, uint64_t id)
{
    if (client->sock < 0)
        return; /* the daemon that broke the connection dropped it */
    if (client->nreleases == FAB__PROTO_RELEASES_MAX)
        fab__client_release_send(client, id);
    else
        client->releases[client->nreleases++] = id;
}

/* A reply read out of turn: a RELEASE's, or that of a call that timed out.
 * A reference the late reply handed out is given back at once (for
 * IMPORT_MANY, every one it handed out). */
static void fab__deferred_reply(fab_client_t *client, const fab__reply_t *reply, fab__fds_t *fds)
{
    fab__client_fds_close(fds);
    client->deferred--;
    if (reply->status != FAB_SUCCESS)
        return;
    if (reply->type == FAB__MSG_RELEASE && reply->u.release.unimported != 0)
        fab__warn_unimported(reply);
    if (reply->type == FAB__MSG_IMPORT_MANY) {
        for (unsigned i = 0; i < reply->u.import_many.count; i++) {
            if (reply->u.import_many.entries[i].status == FAB_SUCCESS)
                fab__client_release_later(client, reply->u.import_many.entries[i].memory.region);
        }
    } else if (fab__reply_region(reply) != 0) {
        fab__client_release_send(client, fab__reply_region(reply));
    }
}

/* Read one reply before deadline, with its fds; 1 read, 0 timed out, -1 the
 * connection broke (already dropped). deadline: the clock's ms to give up
 * at; -1: none (FABMEM_TIMEOUT_MS=0); FAB__ONE_RECEIVE: the clock is not read
 * unless the wait outlasts FAB__RCVTIMEO_SLACK_MS or a signal cuts it short
 * (the caller's wait is this one receive: no reply of an earlier request can
 * come first). Only an IMPORT_MANY reply brings more than one fd: of another,
 * the first is kept and the rest closed, and one cut short with an fd in hand
 * breaks the connection (no daemon sends that). */
FAB__HOT
static int fab__reply_read(fab_client_t *client, int64_t deadline, bool fresh,
                           fab__reply_t *reply_out, fab__fds_t *fds)
{
    /* A blocking receive bounded by SO_RCVTIMEO, set again only when what
     * is left of the deadline is well under it: a reply costs one system
     * call, not a poll and a receive. It may overshoot the deadline by
     * FAB__RCVTIMEO_SLACK_MS at most. fresh: the deadline was just set from
     * the clock (fab__client_deadline), so all of timeout_ms is left and
     * the clock is not read again. Without a deadline yet (FAB__ONE_RECEIVE)
     * the first receive is bounded by the slack: a reply within it costs no
     * clock read; past it, or cut short by a signal, the deadline is set
     * from the clock then, so that the wait ends no sooner than timeout_ms
     * and no more than the slack later, however many signals come. */
    bool lazy = deadline == FAB__ONE_RECEIVE;
    ssize_t n;
    for (;;) {
        if (deadline != -1) {
            int64_t left, least;
            if (lazy) {
                left = client->timeout_ms < FAB__RCVTIMEO_SLACK_MS ? client->timeout_ms
                                                                   : FAB__RCVTIMEO_SLACK_MS;
                least = left;
            } else {
                left = fresh ? client->timeout_ms : deadline - fab__now_ms();
                least = left - FAB__RCVTIMEO_SLACK_MS;
            }
            if (left <= 0)
                return 0;
            if (client->rcvtimeo_ms == 0 || client->rcvtimeo_ms < least ||
                client->rcvtimeo_ms > left + (lazy ? 0 : FAB__RCVTIMEO_SLACK_MS)) {
                struct timeval tv = {(time_t)(left / 1000), (suseconds_t)(left % 1000) * 1000};
                if (setsockopt(client->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0)
                    client->rcvtimeo_ms = (int)left;
            }
        }
        n = fab__proto_recv_fds(client->sock, client->wire, fds->fd, &fds->count, &fds->lost, 0);
        if (n >= 0 || (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK))
            break;
        if (lazy) {
            /* Timed out: at least the slack went by (all of timeout_ms, if
             * that is less). A signal: at most the slack did. */
            bool timed_out = errno != EINTR;
            if (timed_out && client->timeout_ms <= FAB__RCVTIMEO_SLACK_MS)
                return 0;
            deadline = fab__now_ms() + client->timeout_ms - (timed_out ? FAB__RCVTIMEO_SLACK_MS : 0);
            lazy = false;
        }
        fresh = false; /* 0 once past the deadline */
    }
    bool decoded = n > 0 && fab__reply_decode(client->wire, (size_t)n, reply_out) == FAB_SUCCESS;
    /* Only IMPORT_MANY and MC_JOIN (the staging and shadow memfds) carry
     * more than one fd (the message list's reply fds). */
    bool several = decoded && fab__msg(reply_out->type)->reply_fds > 1;
    if (!decoded || (!several && fds->lost && fds->count > 0)) {
        if (n > 0)
            fab__client_fds_close(fds);
        fds->count = 0;
        fab__client_connection_lost(client);
        return -1;
    }
    while (!several && fds->count > 1)
        close(fds->fd[--fds->count]);
    return 1;
}

/* Read the replies of releases sent earlier; the caller holds the lock. */
void fab__client_drain(fab_client_t *client)
{
    int64_t deadline = fab__client_deadline(client);
    for (bool fresh = true; client->deferred > 0 && client->sock >= 0; fresh = false) {
        fab__reply_t reply;
        fab__fds_t fds;
        int got = fab__reply_read(client, deadline, fresh, &reply, &fds);
        if (got == 0) {
            fab__log(FAB__LOG_WARN, "fabmemd did not answer within %d ms", client->timeout_ms);
            fab__client_connection_lost(client);
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
fab_status_t fab__client_reply_await(fab_client_t *client, const fab__request_t *request,
                                     fab__reply_t *reply_out, int *fd_out);

/* The same with every fd the reply brought (IMPORT_MANY's: one per
 * successful import, and lost set when this process had no room for the
 * rest; the caller gives back what came without its fd). An error reply
 * brings none. */
fab_status_t fab__client_reply_await_fds(fab_client_t *client, const fab__request_t *request,
                                         fab__reply_t *reply_out, fab__fds_t *fds_out);

/* Send a request (with the released ids that wait); flags FAB__REQUEST_WAITS
 * when nothing more goes out before its reply. 0, or -1: the connection
 * broke (dropped). */
FAB__HOT
int fab__client_request_send(fab_client_t *client, fab__request_t *request, int fd_in,
                             uint8_t flags)
{
    request->seq = ++client->seq;
    request->flags = flags;
    size_t len = fab__request_encode_releasing(client, request, client->wire);
    if (fab__proto_send(client->sock, client->wire, len, fd_in) != 0) {
        fab__client_connection_lost(client);
        return -1;
    }
    fab__client_releases_gone(client); /* the fds closed while the daemon answers */
    return 0;
}

fab_status_t fab__client_call_raw(fab_client_t *client, fab__request_t *request, int fd_in,
                                  fab__reply_t *reply_out, int *fd_out)
{
    if (client->sock < 0 || fab__client_request_send(client, request, fd_in, FAB__REQUEST_WAITS) != 0)
        return FAB_ERROR_SYSTEM_NOT_READY;
    return fab__client_reply_await(client, request, reply_out, fd_out);
}

/* Wait for the reply to request, sent last or among the last (replies come
 * in order; those read out of turn are handled on the way). */
FAB__HOT
fab_status_t fab__client_reply_await(fab_client_t *client, const fab__request_t *request,
                                     fab__reply_t *reply_out, int *fd_out)
{
    fab__fds_t fds = {0};
    fab_status_t status = fab__client_reply_await_fds(client, request, reply_out, &fds);
    int fd = fds.count > 0 ? fds.fd[0] : -1; /* never more than one but for IMPORT_MANY */
    if (fd_out != NULL)
        *fd_out = fd;
    else if (fd >= 0)
        close(fd);
    return status;
}

FAB__HOT
fab_status_t fab__client_reply_await_fds(fab_client_t *client, const fab__request_t *request,
                                         fab__reply_t *reply_out, fab__fds_t *fds_out)
{
    /* With no reply of an earlier request to come first, one reply ends
     * the wait (the loop below goes round only while deferred > 0), and the
     * clock is read only for a wait that outlasts FAB__RCVTIMEO_SLACK_MS
     * (fab__reply_read). */
    int64_t deadline = client->deferred > 0 || client->timeout_ms <= 0 ? fab__client_deadline(client)
                                                                        : FAB__ONE_RECEIVE;
    fds_out->count = 0;
    fds_out->lost = 0;
    /* The daemon answers in order: replies read out of turn come first.
     * Each is read into reply_out itself (1,200 bytes: not copied again). */
    for (bool fresh = true;; fresh = false) {
        fab__reply_t *reply = reply_out;
        fab__fds_t fds;
        int got = fab__reply_read(client, deadline, fresh, reply, &fds);
        if (got < 0)
            return FAB_ERROR_SYSTEM_NOT_READY;
        if (got == 0) {
            fab__log(FAB__LOG_WARN, "fabmemd did not answer within %d ms (FABMEM_TIMEOUT_MS)",
                     client->timeout_ms);
            if (request->type == FAB__MSG_HELLO || request->type == FAB__MSG_ADOPT ||
                client->deferred >= FAB__DEFERRED_MAX)
                fab__client_connection_lost(client);
            else
                client->deferred++; /* its reply is read and undone later */
            return FAB_ERROR_SYSTEM_NOT_READY;
        }
        if (reply->seq != request->seq && client->deferred > 0) {
            fab__deferred_reply(client, reply, &fds);
            if (client->sock < 0)
                return FAB_ERROR_SYSTEM_NOT_READY;
            continue;
        }
        if (reply->seq != request->seq || reply->type != request->type) {
            fab__client_fds_close(&fds);
            fab__client_connection_lost(client);
            return FAB_ERROR_SYSTEM_NOT_READY;
        }
        fab_status_t status = (fab_status_t)reply->status;
        if (status != FAB_SUCCESS) {
            fab__client_fds_close(&fds); /* an error hands out nothing */
            fds.lost = 0;
        }
        if (fds.lost && reply->type != FAB__MSG_IMPORT_MANY) {
            fab__log(FAB__LOG_WARN, "out of file descriptors: the daemon's reply lost its fd");
            fds.lost = 0;
            if (fab__reply_region(reply) != 0)
                fab__client_release_send(client, fab__reply_region(reply));
            if (status == FAB_SUCCESS)
                status = FAB_ERROR_OUT_OF_MEMORY;
        }
        *fds_out = fds;
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
        status = fab__client_call_raw(client, &hello, -1, &reply, NULL);
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
        client->sock = fab__client_connect(client, &status);
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
fab_status_t fab__client_reconnect(fab_client_t *client)
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
            status = fab__client_call_raw(client, &adopt, r->fd, &reply, NULL);
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
FAB__HOT
fab_status_t fab__client_call(fab_client_t *client, fab__request_t *request,
                              const fab_region_t *region, fab__reply_t *reply_out, int *fd_out)
{
    for (int attempt = 0;; attempt++) {
        int fresh = client->sock < 0;
        if (fresh) {
            fab_status_t status = fab__client_reconnect(client);
            if (status != FAB_SUCCESS)
                return status;
        }
        if (region != NULL) {
            if (region->id == 0)
                return FAB_ERROR_INVALID_HANDLE;
            request->u.region.region = region->id;
        }
        fab_status_t status = fab__client_call_raw(client, request, -1, reply_out, fd_out);
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

/* This process's id without a system call per check: read when the library
 * is loaded, and again in the child of every fork() (pthread_atfork). A
 * child made some other way (a raw clone, or vfork without exec) would pass
 * for its parent: the check is a guard against the common mistake, not a
 * wall. Set by a constructor rather than under pthread_once, so that each of
 * the four calls an import makes reads one variable and calls nothing. */
static pid_t fab__pid;

static void fab__pid_after_fork(void)
{
    fab__pid = getpid();
}

__attribute__((constructor)) static void fab__pid_init(void)
{
    fab__pid = getpid();
    (void)pthread_atfork(NULL, NULL, fab__pid_after_fork);
}

static pid_t fab__self(void)
{
    return fab__pid;
}

/* Whether the calling process may use client: the one that connected it. */
FAB__HOT
bool fab__client_owned(const fab_client_t *client)
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
    fab_status_t status;
    client->pid = fab__self();
    client->timeout_ms = fab__timeout_from_env();
    client->autostart = autostart;
    client->keeps_spare = fab__region_keeps_spare();
    snprintf(client->node_name, sizeof(client->node_name), "%s", node);
    snprintf(client->path, sizeof(client->path), "%s", path);
    status = fab__open(client);
    if (status != FAB_SUCCESS) {
        fab__log(FAB__LOG_INFO, "no fabmemd answers at %s: %s", path, fab_status_name(status));
        free(client);
        return status;
    }
    *client_out = client;
    return FAB_SUCCESS;
}

void fab__client_flush(fab_client_t *client)
{
    if (client == NULL || !fab__client_owned(client))
        return;
    fab__rw_wrlock(&client->lock);
    fab__client_drain(client);
    fab__rw_unlock(&client->lock);
}

fab_status_t fab_client_close(fab_client_t *client)
{
    if (client == NULL)
        return FAB_SUCCESS;
    if (!fab__client_owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    fab__rw_wrlock(&client->lock);
    if (client->live_regions != 0) {
        fab__rw_unlock(&client->lock);
        return FAB_ERROR_ILLEGAL_STATE;
    }
    fab__client_drain(client); /* for the warnings they may carry */
    if (client->sock >= 0)
        close(client->sock); /* the daemon drops the references still queued */
    fab__client_releases_gone(client);
    client->sock = -1;
    fab__rw_unlock(&client->lock);
    fab_topology_destroy(client->topology);
    for (size_t i = 0; i < client->noutdated; i++)
        fab_topology_destroy(client->outdated[i]);
    free(client->outdated);
    free(client->spare);
    free(client);
    return FAB_SUCCESS;
}

int fab_client_node_index(const fab_client_t *client)
{
    return client ? client->node : -1;
}

/* ---- what the daemon says of itself ---- */

fab_status_t fab_client_stats(fab_client_t *client, fab_daemon_stats_t *stats_out)
{
    if (client == NULL || stats_out == NULL)
        return FAB_ERROR_INVALID_VALUE;
    if (!fab__client_owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    fab__request_t request = {.type = FAB__MSG_STATS};
    fab__reply_t reply;
    fab__rw_wrlock(&client->lock);
    fab_status_t status = fab__client_call(client, &request, NULL, &reply, NULL);
    fab__rw_unlock(&client->lock);
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
    if (!fab__client_owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    fab__request_t request = {.type = FAB__MSG_VERIFY};
    request.u.import.handle = *handle;
    fab__reply_t reply;
    fab__rw_wrlock(&client->lock);
    fab_status_t status = fab__client_call(client, &request, NULL, &reply, NULL);
    fab__rw_unlock(&client->lock);
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
        status = fab__client_call(client, &request, NULL, &reply, NULL);
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
    if (!fab__client_owned(client))
        return FAB_ERROR_ILLEGAL_STATE;
    fab__rw_wrlock(&client->lock);
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
    fab__rw_unlock(&client->lock);
    return status;
}

