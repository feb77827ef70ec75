/* fabmemd's event loop: the connections, their replies and the fds in
 * flight, the requests a hung IMEX holds, idle exit and shutdown.
 *
 * The loop: one thread, non-blocking sockets. Each client sends one request
 * and reads one reply; a client whose reply cannot be sent at once (it does
 * not read) gets no more requests read until the reply went out, so it can
 * only stall itself. Each connection's send buffer is kept small
 * (FAB__CONN_SNDBUF), so a client that sends requests without reading its
 * replies runs into that after a handful of replies: what one connection can
 * keep in flight, memfds included, is bounded, and with the per-uid
 * connection limit so is what one user can; a reply with several fds
 * (IMPORT_MANY's) goes out only when the client has read every earlier one. A reply that cannot be sent for
 * any other reason (the kernel refuses more fds in flight: ETOOMANYREFS) is
 * undone and replaced by an error reply: the failure is that one request's,
 * never the connection's or another user's. A message that does not decode,
 * or that comes with an fd, closes the connection (after an error reply where
 * there is a request to answer); the peer's references are dropped with it.
 * ADOPT (a client's memory, back after a restart) and IPC_PUBLISH (a
 * cuMemAlloc allocation shared by legacy CUDA IPC) are the requests that
 * carry an fd. Nothing on the request path blocks.
 *
 * An import that a hung IMEX holds (src/daemon/fieldfaults.h) blocks only its own
 * client: the loop keeps the request, stops reading that client (it waits
 * for this reply anyway), and answers it when the faults change (putting it
 * to the registry again) or when imex_timeout_ms has passed (IMEX's
 * failure); epoll_wait's timeout is cut to the nearest such deadline. An
 * IMPORT_MANY is held whole in the same way (registry.h), and a pending
 * reply holds all the fds of its batch.
 *
 * Fds in flight per uid. The kernel charges every fd in a message not read
 * yet to the sender, the daemon, and refuses more once they pass its
 * RLIMIT_NOFILE: a uid whose connections leave fd replies unread could
 * take that from every other uid. So each client keeps the replies it was
 * sent and may not have read (their sizes as the socket counts them, in
 * its send queue, and their fds), and the loop learns which were read from
 * SIOCOUTQ: the socket's unread bytes are the newest replies' (a client
 * reads in order). A reply with fds goes out only while its uid's unread
 * fds stay within max_fds_in_flight_per_uid; else it is undone and
 * answered OUT_OF_MEMORY. The queue is looked at only when the count
 * would pass the limit or the record is full, so an import costs no system
 * call for it. A client that the daemon closes with fds still unread
 * (a malformed message) lingers: its references go, but the socket and its
 * count stay until the peer reads them or goes away. */
#include "src/daemon/loop.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "src/base/hot.h"
#include "src/common/log.h"
#include "src/common/proto.h"
#include "src/common/topology_impl.h"
#include "src/daemon/fieldfaults.h"

/* The hot fields (loop.h) fill the record's first line. */
_Static_assert(offsetof(fab__peer_t, sent) <= 64, "fab__peer_t's hot fields span two lines");

/* A zeroed record on a line of its own. */
static fab__peer_t *fab__peer_alloc(void)
{
    size_t size = (sizeof(fab__peer_t) + 63) / 64 * 64;
    fab__peer_t *client = aligned_alloc(64, size);
    if (client != NULL)
        memset(client, 0, size);
    return client;
}

/* Change what epoll waits for on a client. A failure here would leave a
 * client that is never served again; the only sane answer is to let it go. */
static int fab__peer_watch(fab__loop_t *loop, fab__peer_t *client, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = client};
    if (epoll_ctl(loop->epoll, EPOLL_CTL_MOD, client->sock, &ev) == 0)
        return 0;
    fab__log(FAB__LOG_ERROR, "epoll_ctl for client pid %ld: %s", (long)client->conn->pid,
             strerror(errno));
    return -1;
}

/* How many bytes of a socket's send queue a message of len bytes takes
 * (the kernel's own size of it, which SIOCOUTQ sums: fds add nothing):
 * learned once per length by sending one through the probe pair. 0 when
 * unknown. */
FAB__HOT
static uint32_t fab__queue_bytes(fab__loop_t *loop, size_t len)
{
    if (len > FAB__PROTO_MAX || loop->queue_bytes == NULL)
        return 0;
    if (loop->queue_bytes[len] != 0)
        return loop->queue_bytes[len];
    uint8_t buf[FAB__PROTO_MAX] = {0};
    int before = 0, after = 0;
    if (ioctl(loop->probe[0], SIOCOUTQ, &before) != 0 ||
        send(loop->probe[0], buf, len, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)len)
        return 0;
    int ok = ioctl(loop->probe[0], SIOCOUTQ, &after) == 0 && after > before;
    (void)!recv(loop->probe[1], buf, sizeof(buf), MSG_DONTWAIT);
    if (ok)
        loop->queue_bytes[len] = (uint32_t)(after - before);
    return ok ? (uint32_t)(after - before) : 0;
}

/* Forget the oldest record of client's ring, its fds with it. */
static void fab__sent_pop(fab__peer_t *client)
{
    unsigned i = client->sent_head;
    client->sent_bytes -= client->sent[i].bytes;
    client->sent_fds -= client->sent[i].fds;
    *fab__registry_conn_fds_in_flight(client->conn) -= client->sent[i].fds;
    client->sent_head = (i + 1) % FAB__SENT_MAX;
    client->sent_count--;
}

/* Forget the replies client has read: all but the newest whose bytes are
 * still in its socket's send queue (SIOCOUTQ). */
FAB__HOT
static void fab__sent_prune(fab__peer_t *client)
{
    if (client->sent_count == 0)
        return;
    int unread = 0;
    if (ioctl(client->sock, SIOCOUTQ, &unread) != 0)
        return; /* cannot tell: keep counting them */
    while (client->sent_count != 0 && client->sent_bytes > (uint64_t)(unread > 0 ? unread : 0))
        fab__sent_pop(client);
}

/* A reply of len bytes with nfds fds went out to client: keep its record. */
FAB__HOT
static void fab__sent_push(fab__loop_t *loop, fab__peer_t *client, size_t len, unsigned nfds)
{
    if (client->sent_count == FAB__SENT_MAX)
        fab__sent_prune(client);
    if (client->sent_count == FAB__SENT_MAX) {
        /* Cannot happen with the small send buffer; if it did, the two
         * oldest become one, read when both are (counted, never lost). */
        unsigned a = client->sent_head, b = (a + 1) % FAB__SENT_MAX;
        client->sent[b].bytes += client->sent[a].bytes;
        client->sent[b].fds = (uint8_t)(client->sent[b].fds + client->sent[a].fds);
        client->sent_head = b;
        client->sent_count--;
    }
    uint32_t bytes = fab__queue_bytes(loop, len);
    if (bytes == 0 && nfds == 0)
        return; /* unknown size and nothing to count: the ring stays exact */
    unsigned i = (client->sent_head + client->sent_count) % FAB__SENT_MAX;
    client->sent[i].bytes = bytes;
    client->sent[i].fds = (uint8_t)nfds;
    client->sent_count++;
    client->sent_bytes += bytes;
    client->sent_fds += nfds;
    *fab__registry_conn_fds_in_flight(client->conn) += nfds;
}

/* Whether nfds more fds may go to client's uid: within
 * max_fds_in_flight_per_uid once what its clients have read is forgotten
 * (this client first; if that is not enough, every client of the uid).
 * The sweep does not stop at the first client that makes room: records
 * that idle connections read long ago would then stay counted, keep the
 * uid at its limit, and make every later reply of the uid pay a SIOCOUTQ
 * (bench_fabric's syscalls/import row at 64 importers showed it). */
static int fab__fds_may_fly(fab__loop_t *loop, fab__peer_t *client, unsigned nfds)
{
    uint64_t limit = fab__registry_fds_in_flight_limit(loop->daemon);
    uint64_t *count = fab__registry_conn_fds_in_flight(client->conn);
    if (limit == 0 || nfds == 0 || *count + nfds <= limit)
        return 1;
    fab__sent_prune(client);
    if (*count + nfds <= limit)
        return 1;
    for (fab__peer_t *c = loop->clients; c != NULL; c = c->next) {
        if (c != client && fab__registry_conn_fds_in_flight(c->conn) == count)
            fab__sent_prune(c);
    }
    return *count + nfds <= limit;
}

static void fab__peer_close(fab__loop_t *loop, fab__peer_t *client)
{
    /* Closing the socket takes it off epoll: nothing to check here. */
    close(client->sock);
    if (client->prev != NULL)
        client->prev->next = client->next;
    else
        loop->clients = client->next;
    if (client->next != NULL)
        client->next->prev = client->prev;
    fab__reply_fds_release(&client->pending_fds);
    if (client->held)
        loop->nheld--;
    while (client->sent_count != 0)
        fab__sent_pop(client); /* the socket is closed: its queue goes with it */
    fab__registry_conn_log(client->conn, FAB__LOG_DEBUG, "client pid %ld left",
                           (long)client->conn->pid);
    fab__registry_conn_close(loop->daemon, client->conn);
    free(client);
    clock_gettime(CLOCK_MONOTONIC, &loop->idle_since);
}

/* The daemon ends client (a malformed message): at once if it has read
 * every fd it was sent, else it lingers (see the top of this file): its
 * references and IPC entries go now, the socket when the peer has read its
 * fds or gone (its hang-up, or the wakeup a read gives the sender). */
static void fab__peer_end(fab__loop_t *loop, fab__peer_t *client)
{
    fab__sent_prune(client);
    if (client->sent_fds == 0) {
        fab__peer_close(loop, client);
        return;
    }
    client->lingering = 1;
    fab__reply_fds_release(&client->pending_fds);
    client->pending_len = 0;
    if (client->held) {
        client->held = 0;
        loop->nheld--;
    }
    fab__registry_conn_reset(loop->daemon, client->conn);
    if (fab__peer_watch(loop, client, EPOLLOUT | EPOLLET) != 0)
        fab__peer_close(loop, client);
}

/* A lingering client woke: its peer read, or went. */
static void fab__peer_linger(fab__loop_t *loop, fab__peer_t *client, uint32_t events)
{
    if (!(events & (EPOLLHUP | EPOLLERR)))
        fab__sent_prune(client);
    if ((events & (EPOLLHUP | EPOLLERR)) || client->sent_fds == 0)
        fab__peer_close(loop, client);
}

static char fab__listener_tag, fab__signal_tag;

static void fab__accept(fab__loop_t *loop)
{
    for (;;) {
        int sock = accept4(loop->listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (sock < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                /* The pending connection stays pending and the listener
                 * stays readable: take it off epoll, or we would spin. */
                fab__log_limited(&loop->pause_log, FAB__LOG_WARN,
                                 "accept: %s; pausing new connections", strerror(errno));
                if (epoll_ctl(loop->epoll, EPOLL_CTL_DEL, loop->listener, NULL) == 0)
                    loop->accept_paused = 1;
            } else if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
                fab__log(FAB__LOG_WARN, "accept: %s", strerror(errno));
            }
            return;
        }
        struct ucred cred;
        socklen_t len = sizeof(cred);
        fab__peer_t *client = fab__peer_alloc();
        if (client == NULL || getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
            goto fail;
        client->sock = sock;
        /* Over its uid's connection limit: closed at once, so that it holds
         * no descriptor of ours (the registry logged why). */
        client->conn = fab__registry_conn_open(loop->daemon, cred.uid, cred.gid, cred.pid);
        if (client->conn == NULL)
            goto fail;
        int sndbuf = FAB__CONN_SNDBUF;
        (void)setsockopt(sock, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = client};
        if (epoll_ctl(loop->epoll, EPOLL_CTL_ADD, sock, &ev) != 0) {
            fab__registry_conn_close(loop->daemon, client->conn);
            goto fail;
        }
        client->next = loop->clients;
        if (loop->clients != NULL)
            loop->clients->prev = client;
        loop->clients = client;
        continue;
    fail:
        free(client);
        close(sock);
    }
}

/* Bytes of earlier replies that the client on sock has not read yet
 * (SIOCOUTQ: what the socket still holds for its peer); 0 if unknown. */
static int fab__peer_unread(int sock)
{
    int bytes = 0;
    return ioctl(sock, SIOCOUTQ, &bytes) == 0 && bytes > 0 ? bytes : 0;
}

/* Try to send the pending reply; 1 if it went (or the peer is gone and the
 * client was closed: -1), 0 if the socket is full. A reply whose fds cannot
 * travel (ETOOMANYREFS, and any other error while fds ride along) is undone
 * and answered OUT_OF_MEMORY instead: for IMPORT_MANY, every import in it.
 *
 * A reply with several fds (IMPORT_MANY's) goes out only when the client
 * has read every earlier reply; else it is refused the same way. Fds in
 * flight are charged to the daemon's uid, whatever client holds them
 * unread: a client that sent batches and never read could otherwise keep
 * sixteen times as many in flight per connection as one that sends single
 * IMPORTs. The library reads each reply before it sends the next batch. */
FAB__HOT
static int fab__peer_flush(fab__loop_t *loop, fab__peer_t *client)
{
    fab__reply_fds_t *fds = &client->pending_fds;
    int unread = fds->count > 1 ? fab__peer_unread(client->sock) : 0;
    int over = unread == 0 && !fab__fds_may_fly(loop, client, fds->count);
    if (unread == 0 && !over &&
        fab__proto_send_fds(client->sock, client->pending, client->pending_len, fds->fd,
                            fds->count) == 0) {
        fab__sent_push(loop, client, client->pending_len, fds->count);
        fab__reply_fds_release(fds);
        client->pending_len = 0;
        return 1;
    }
    if (unread == 0 && !over && (errno == EAGAIN || errno == EWOULDBLOCK))
        return 0;
    fab__reply_t reply;
    if ((unread == 0 && !over && (fds->count == 0 || errno == EPIPE || errno == ECONNRESET)) ||
        fab__reply_decode(client->pending, client->pending_len, &reply) != FAB_SUCCESS) {
        fab__peer_close(loop, client);
        return -1;
    }
    if (over)
        fab__registry_conn_log(client->conn, FAB__LOG_WARN,
                               "reply to pid %ld (uid %lu) would carry %u fds while %llu it was "
                               "sent are unread, max_fds_in_flight_per_uid is %llu: refused "
                               "instead", (long)client->conn->pid,
                               (unsigned long)client->conn->uid, fds->count,
                               (unsigned long long)*fab__registry_conn_fds_in_flight(client->conn),
                               (unsigned long long)fab__registry_fds_in_flight_limit(loop->daemon));
    else if (unread > 0)
        fab__registry_conn_log(client->conn, FAB__LOG_WARN,
                         "reply to pid %ld would carry %u fds while %d bytes of its earlier "
                         "replies are unread: refused instead",
                         (long)client->conn->pid, fds->count, unread);
    else
        fab__registry_conn_log(client->conn, FAB__LOG_WARN,
                         "reply to pid %ld could not carry its fd%s (%s): refused instead",
                         (long)client->conn->pid, fds->count > 1 ? "s" : "", strerror(errno));
    fab__registry_undo(loop->daemon, client->conn, &reply);
    fab__reply_fds_release(fds);
    reply.status = FAB_ERROR_OUT_OF_MEMORY; /* an error reply carries no body */
    client->pending_len = fab__reply_encode(&reply, client->pending);
    return fab__peer_flush(loop, client);
}

/* A hung IMEX holds this request: keep it, and watch the client only for
 * its going away (epoll reports hang-ups whatever it is asked) until the
 * request is answered. */
static void fab__peer_hold(fab__loop_t *loop, fab__peer_t *client, const fab__request_t *request)
{
    fab__faults_t *faults = fab__registry_faults(loop->daemon);
    client->held = 1;
    client->held_request = *request;
    /* Its carried releases were dropped when it was first answered; the
     * retries (fieldfaults.h) must not drop them again. */
    client->held_request.nreleases = 0;
    client->held_deadline = fab__now_ms() + fab__faults_imex_timeout_ms(faults);
    client->held_generation = fab__faults_generation(faults);
    loop->nheld++;
    fab__log(FAB__LOG_DEBUG, "client pid %ld: import held by a hung IMEX", (long)client->conn->pid);
    if (fab__peer_watch(loop, client, 0) != 0)
        fab__peer_close(loop, client);
}

/* Answer a held request: again through the registry when the faults
 * changed (it may be held once more, with its first deadline), or with
 * IMEX's failure once its deadline passed (for IMPORT_MANY, of the imports
 * that are still held; the registry answers the others). */
static void fab__peer_retry(fab__loop_t *loop, fab__peer_t *client, int64_t now)
{
    fab__faults_t *faults = fab__registry_faults(loop->daemon);
    fab__reply_t reply;
    uint64_t generation = fab__faults_generation(faults);
    if (generation != client->held_generation) {
        client->held_generation = generation;
        fab__registry_answer(loop->daemon, client->conn, &client->held_request, -1, &reply,
                             &client->pending_fds);
        if (reply.status != FAB__FAULT_DEFERRED)
            goto answer;
    }
    if (now < client->held_deadline)
        return;
    fab__registry_answer_expired(loop->daemon, client->conn, &client->held_request, &reply,
                                 &client->pending_fds);
answer:
    client->held = 0;
    loop->nheld--;
    client->pending_len = fab__reply_encode(&reply, client->pending);
    int sent = fab__peer_flush(loop, client);
    if (sent >= 0 && fab__peer_watch(loop, client, sent ? EPOLLIN : EPOLLOUT) != 0)
        fab__peer_close(loop, client);
}

/* Every held request whose faults changed or whose deadline passed. */
static void fab__loop_held(fab__loop_t *loop)
{
    if (loop->nheld == 0)
        return;
    fab__faults_t *faults = fab__registry_faults(loop->daemon);
    int64_t now = fab__now_ms();
    for (fab__peer_t *client = loop->clients, *next; client != NULL; client = next) {
        next = client->next; /* the retry may close it */
        if (client->held && (client->held_generation != fab__faults_generation(faults) ||
                             now >= client->held_deadline))
            fab__peer_retry(loop, client, now);
    }
}

/* epoll_wait's timeout, cut to the nearest held request's deadline. */
static int fab__held_timeout_ms(fab__loop_t *loop, int timeout)
{
    if (loop->nheld == 0)
        return timeout;
    int64_t now = fab__now_ms();
    for (const fab__peer_t *client = loop->clients; client != NULL; client = client->next) {
        if (!client->held)
            continue;
        int64_t left = client->held_deadline > now ? client->held_deadline - now : 0;
        if (timeout < 0 || left < timeout)
            timeout = (int)left;
    }
    return timeout;
}

FAB__HOT
static void fab__peer_readable(fab__loop_t *loop, fab__peer_t *client)
{
    /* Every queued message per wakeup (up to FAB__READS_PER_WAKEUP; epoll is
     * level-triggered and reports what is left). A request flagged WAITS
     * says its sender sends nothing more before the reply, so the read that
     * would only find the socket empty is skipped; a sender that lies about
     * it delays only its own next message until the next epoll_wait. */
    for (int turn = 0; turn < FAB__READS_PER_WAKEUP; turn++) {
        uint8_t buf[FAB__PROTO_MAX];
        int fd = -1;
        ssize_t n = fab__proto_recv(client->sock, buf, &fd, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) {
            if (n < 0)
                fab__registry_conn_log(client->conn, FAB__LOG_INFO, "client pid %ld: %s, closing",
                                       (long)client->conn->pid, strerror(errno));
            fab__peer_close(loop, client);
            return;
        }
        fab__request_t request;
        fab_status_t status = fab__request_decode(buf, (size_t)n, &request);
        if (status != FAB_SUCCESS || (fd != -1 && fab__msg(request.type)->request_fds == 0)) {
            /* Only the messages the list says bring an fd may (ADOPT,
             * IPC_PUBLISH, MC_JOIN, MC_BIND), and a message that does not
             * decode leaves nothing to trust about the stream. */
            fab__registry_conn_log(client->conn, FAB__LOG_WARN, "client pid %ld sent %s, closing",
                                   (long)client->conn->pid,
                                   fd != -1 ? "a file descriptor" : "a malformed message");
            if (fd >= 0)
                close(fd);
            if (status == FAB_SUCCESS) {
                fab__reply_t reply = {.type = request.type, .seq = request.seq,
                                      .status = FAB_ERROR_INVALID_VALUE};
                size_t len = fab__reply_encode(&reply, buf);
                if (fab__proto_send(client->sock, buf, len, -1) == 0)
                    fab__sent_push(loop, client, len, 0);
            }
            fab__peer_end(loop, client);
            return;
        }
        fab__reply_t reply;
        fab__registry_answer(loop->daemon, client->conn, &request, fd, &reply,
                             &client->pending_fds);
        if (reply.status == FAB__FAULT_DEFERRED) {
            fab__peer_hold(loop, client, &request);
            return;
        }
        client->pending_len = fab__reply_encode(&reply, client->pending);
        int sent = fab__peer_flush(loop, client);
        if (sent < 0)
            return;
        if (sent == 0) {
            /* Stop reading this client until its reply is out. The memfds
             * in the pending reply stay open: the client holds references. */
            if (fab__peer_watch(loop, client, EPOLLOUT) != 0)
                fab__peer_close(loop, client);
            return;
        }
        if (request.flags & FAB__REQUEST_WAITS)
            return;
    }
}

static void fab__peer_writable(fab__loop_t *loop, fab__peer_t *client)
{
    if (fab__peer_flush(loop, client) == 1 && fab__peer_watch(loop, client, EPOLLIN) != 0)
        fab__peer_close(loop, client);
}

static int fab__idle_timeout_ms(fab__loop_t *loop)
{
    if (loop->idle_exit <= 0 || fab__registry_conn_count(loop->daemon) != 0 ||
        fab__registry_alloc_count(loop->daemon) != 0)
        return -1;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long elapsed = (now.tv_sec - loop->idle_since.tv_sec) * 1000 +
                   (now.tv_nsec - loop->idle_since.tv_nsec) / 1000000;
    long left = loop->idle_exit * 1000L - elapsed;
    return left > 0 ? (int)left : 0;
}

FAB__HOT
int fab__loop_run(fab__loop_t *loop)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &fab__listener_tag};
    struct epoll_event sig = {.events = EPOLLIN, .data.ptr = &fab__signal_tag};
    if (epoll_ctl(loop->epoll, EPOLL_CTL_ADD, loop->listener, &ev) != 0 ||
        epoll_ctl(loop->epoll, EPOLL_CTL_ADD, loop->signals, &sig) != 0) {
        fab__log(FAB__LOG_ERROR, "epoll_ctl: %s", strerror(errno));
        return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &loop->idle_since);
    loop->running = 1;
    while (loop->running) {
        struct epoll_event events[64];
        int timeout = fab__idle_timeout_ms(loop);
        if (timeout == 0) {
            fab__log(FAB__LOG_INFO, "idle for %d s, exiting", loop->idle_exit);
            break;
        }
        if (loop->accept_paused && (timeout < 0 || timeout > 100))
            timeout = 100; /* try accepting again ten times a second */
        timeout = fab__held_timeout_ms(loop, timeout);
        int n = epoll_wait(loop->epoll, events, 64, timeout);
        if (n < 0 && errno != EINTR) {
            fab__log(FAB__LOG_ERROR, "epoll_wait: %s", strerror(errno));
            return -1;
        }
        if (loop->accept_paused) {
            struct epoll_event again = {.events = EPOLLIN, .data.ptr = &fab__listener_tag};
            if (epoll_ctl(loop->epoll, EPOLL_CTL_ADD, loop->listener, &again) == 0)
                loop->accept_paused = 0;
        }
        for (int i = 0; i < n; i++) {
            void *tag = events[i].data.ptr;
            if (tag == &fab__listener_tag) {
                fab__accept(loop);
            } else if (tag == &fab__signal_tag) {
                struct signalfd_siginfo info;
                if (read(loop->signals, &info, sizeof(info)) == sizeof(info))
                    fab__log(FAB__LOG_INFO, "signal %u, exiting", info.ssi_signo);
                loop->running = 0;
            } else {
                fab__peer_t *client = tag;
                if (client->lingering) {
                    fab__peer_linger(loop, client, events[i].events);
                } else if (client->held) {
                    /* Only a hang-up wakes a held client: it is gone. */
                    if (events[i].events & (EPOLLHUP | EPOLLERR))
                        fab__peer_close(loop, client);
                } else if (client->pending_len != 0)
                    fab__peer_writable(loop, client);
                else
                    fab__peer_readable(loop, client);
            }
        }
        fab__loop_held(loop);
    }
    return 0;
}

/* Every client still connected at exit: close them so that nothing leaks. */
void fab__loop_shutdown(fab__loop_t *loop)
{
    while (loop->clients != NULL)
        fab__peer_close(loop, loop->clients);
}

