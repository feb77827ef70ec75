/* fabmemd's event loop (loop.c): one thread, non-blocking sockets, epoll;
 * main.c makes the loop's descriptors and registry, runs it, and shuts it
 * down. A peer is one client connection as the loop keeps it. */
#ifndef FABMEM_DAEMON_LOOP_H
#define FABMEM_DAEMON_LOOP_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "src/common/log.h"
#include "src/common/proto.h"
#include "src/daemon/registry.h"

/* Messages read from one client per wakeup, so that one that pipelines
 * cannot starve the others. */
#define FAB__READS_PER_WAKEUP 16
/* Asked of the kernel, which doubles it: room for about sixteen replies, more
 * than a client that reads them ever leaves unread (eight deferred RELEASE
 * replies and the one it waits for). */
#define FAB__CONN_SNDBUF 6144
/* Replies a client may have unread that the loop keeps a record of: more
 * than its send buffer ever holds (sixteen of the smallest). */
#define FAB__SENT_MAX 64

typedef struct fab__peer {
    /* What every request reads or writes comes first, in the record's first
     * cache line (the record is 64-byte aligned): with many connections the
     * loop reaches each record cold, and each line more is a miss more. */
    int sock;
    int lingering;       /* closed by the daemon, waiting for its fds to be read */
    int held;            /* a request held for a hung IMEX (fieldfaults.h) */
    unsigned sent_head, sent_count;
    unsigned sent_fds;   /* over the ring; in its uid's count too */
    fab__conn_t *conn;
    size_t pending_len;  /* a reply waiting for the socket to drain */
    uint64_t sent_bytes; /* over the ring */
    struct fab__peer *prev, *next; /* the loop's list, for shutdown */
    /* Replies sent that it may not have read, oldest first (a ring). */
    struct {
        uint32_t bytes; /* as the send queue counts them */
        uint8_t fds;
    } sent[FAB__SENT_MAX];
    fab__reply_fds_t pending_fds; /* and the fds it carries */
    uint8_t pending[FAB__PROTO_MAX];
    int64_t held_deadline;    /* CLOCK_MONOTONIC ms: then it fails */
    uint64_t held_generation; /* the faults it was last tried under */
    fab__request_t held_request;
} fab__peer_t;

typedef struct fab__loop {
    int epoll;
    int listener;
    int signals;
    fab__registry_t *daemon;
    fab__peer_t *clients;
    int idle_exit; /* seconds; 0: never */
    int accept_paused; /* out of fds: the listener is off epoll for a moment */
    fab__log_limit_t pause_log;
    int probe[2];     /* a socket pair: how many bytes of the send queue a message takes */
    uint32_t *queue_bytes; /* by message length: those bytes (0: not known yet) */
    struct timespec idle_since;
    int running;
    size_t nheld; /* clients with a held request */
} fab__loop_t;

/* Serve until a signal stops it, or idle_exit passes: 0, or -1 when epoll
 * fails. */
int fab__loop_run(fab__loop_t *loop);

/* Close every peer (their references go with them). */
void fab__loop_shutdown(fab__loop_t *loop);

#endif /* FABMEM_DAEMON_LOOP_H */
