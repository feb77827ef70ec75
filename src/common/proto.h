/* The wire protocol between fabmem clients and fabmemd, shared by both sides so
 * that there is one encoder and one decoder (docs/fabric.md describes it).
 *
 * Transport: a SOCK_SEQPACKET Unix socket. One datagram is one message, so a
 * message can be neither split nor merged; a file descriptor travels as
 * SCM_RIGHTS on the reply that hands out memory. Every message starts with a
 * 16-byte header (little-endian):
 *
 *   offset size field
 *        0    4 magic "FBM1"
 *        4    2 type (replies: request type | FAB__MSG_REPLY)
 *        6    1 requests: how many released region ids follow the body (at
 *               most FAB__PROTO_RELEASES_MAX); replies: zero
 *        7    1 requests: flags (FAB__REQUEST_WAITS); replies: zero
 *        8    4 sequence number (a reply echoes its request's)
 *       12    4 status (fab_status_t; zero in requests)
 *
 * followed by a body whose layout each type fixes, and in a request by the
 * released region ids (u64 each); a body of another length than its type's
 * is malformed.
 *
 * Released ids ride on the next request instead of a RELEASE message of
 * their own (protocol 5): the daemon drops each of those references before
 * it answers the request, and sends no reply for them. A release that fails
 * (an id the connection does not hold, which a well-behaved client never
 * sends) is logged by the daemon and changes nothing else: the request is
 * answered as if the id had not come. A RELEASE message still gets its reply
 * (the client sends one for what it allocated, whose reply may carry the
 * never-imported warning). The client sends one request at a time and
 * waits for its reply; the daemon answers every request it can decode, and
 * closes the connection on one it cannot.
 *
 * ADOPT is how a client hands its live memory to a daemon that restarted:
 * the handle proves the uuid was minted under the same key (state file), the
 * memfd travels with it, and a creator proves it is one with the creator
 * token that only the ALLOC reply carried. ADOPT, IPC_PUBLISH, MC_JOIN (a
 * team's token) and MC_BIND (the memory bound) are the only requests that
 * may carry an fd; MC_JOIN's reply is the only one but IMPORT_MANY's with
 * more than one (the member's staging and shadow memfds).
 *
 * IPC_PUBLISH, IPC_OPEN and IPC_WITHDRAW are legacy CUDA IPC
 * (cuIpcGetMemHandle and friends): a process publishes the memfd of one
 * cuMemAlloc allocation (or of an interprocess event's shared page) and gets
 * 64 handle bytes the daemon signed; another process on the same node opens
 * them and gets the memfd back; the publisher withdraws them on cuMemFree,
 * and its connection closing withdraws all it published. */
#ifndef FABMEM_COMMON_PROTO_H
#define FABMEM_COMMON_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fabmem/handle.h"
#include "src/common/faultwords.h"
#include "src/common/topology_impl.h"

#define FAB__PROTO_MAGIC 0x314d4246u /* "FBM1" */
/* 3: the TOPOLOGY node record grew the fabric status and health, the
 * platform place and the PCI fields; a version-2 peer could not decode it.
 * 4: the node record ends with the config's device-attribute overrides; and
 * IPC_PUBLISH, IPC_OPEN and IPC_WITHDRAW (legacy CUDA IPC), which a
 * version-3 daemon would answer by closing the connection.
 * 5: FAULT (fabmem fault), which a version-4 daemon would answer by closing
 * the connection; and a request may carry released region ids and the WAITS
 * flag in header bytes 6 and 7, which a version-4 daemon refuses as
 * malformed.
 * 6: IMPORT_MANY (several handles in one request, their fds in one reply),
 * which a version-5 daemon would answer by closing the connection. A
 * version-6 daemon answers it only to a client that said HELLO 6, and a
 * version-6 client that a daemon refuses says HELLO 5 on the same connection
 * and then sends single IMPORTs instead.
 * 7: an IMPORT reply ends with one byte more, the memory's kind
 * (FAB__MEMORY_PLAIN or FAB__MEMORY_MC_TOKEN), sent only to a client that
 * said HELLO 7: a client that knows it is plain memory need not ask MC_JOIN
 * whether it is a multicast team's token. A version-7 client that a daemon
 * refuses says HELLO 6, then 5, on the same connection. */
#define FAB__PROTO_VERSION 7u
/* The oldest version the daemon still serves: a version-4 client never sets
 * header bytes 6 and 7, never sends FAULT, and reads every RELEASE reply,
 * which the daemon still sends, so it is served as before. (A version-5
 * client refuses nothing older: it is the daemon that a HELLO asks.) */
#define FAB__PROTO_VERSION_MIN 4u
/* The first version that has IMPORT_MANY. */
#define FAB__PROTO_VERSION_IMPORT_MANY 6u
/* The first version whose IMPORT reply says the memory's kind. */
#define FAB__PROTO_VERSION_MEMORY_KIND 7u
#define FAB__PROTO_RELEASES_MAX 16 /* released ids one request may carry */
/* The sender sends nothing more before this request's reply: the daemon
 * need not look for another message from it before it sleeps. */
#define FAB__REQUEST_WAITS 0x01
#define FAB__PROTO_HEADER 16
#define FAB__PROTO_MAX 1536 /* no message is longer */
/* Handles one IMPORT_MANY carries, and so the most fds one message carries:
 * the request is 16 + 5 + 16 * 64 bytes and up to 16 released ids (1,173 in
 * all), the reply 16 + 1 + 16 * 41 (673), both under FAB__PROTO_MAX. */
#define FAB__IMPORT_MANY_MAX 16
#define FAB__PROTO_FDS_MAX FAB__IMPORT_MANY_MAX
#define FAB__TOKEN_BYTES 16 /* the creator token */
#define FAB__IPC_HANDLE_BYTES 64 /* CU_IPC_HANDLE_SIZE */

/* What an IPC handle names. */
enum {
    FAB__IPC_KIND_MEM = 1,   /* a cuMemAlloc allocation */
    FAB__IPC_KIND_EVENT = 2, /* an interprocess event's shared page */
};


#define FAB__MC_BODY 44  /* every MC_* request's body */
#define FAB__MC_REPLY 40 /* every MC_* reply's body, on success */

/* The wire messages, one row each, the one list: the type enum, the
 * request bodies' lengths, which requests bring an fd, how many fds a
 * reply may carry and the codec's body layouts are made from it (proto.c;
 * the daemon's loop and the client's reply reader ask fab__msgs), and so
 * is fabmemd's table of handlers (src/daemon/dispatch.c).
 *   X(NAME, number, request body bytes, request fds, reply fds,
 *     request layout, reply layout)
 * A request body's length is its fixed part where the body varies (HELLO:
 * + the name; IMPORT_MANY: + 64 bytes a handle). Reply fds: the most a
 * successful reply carries. Messages of one layout are coded alike. */
#define FAB__MSG_LIST(X)                                                                    \
    /* u32 version, u8 name length, name bytes (0: first node) */                          \
    X(HELLO, 1, 5, 0, 0, HELLO, HELLO)                                                      \
    /* i32 device, u64 size, u8 peer access, u32 handle types */                           \
    X(ALLOC, 2, 17, 0, 1, ALLOC, ALLOC)                                                     \
    /* u64 region id */                                                                     \
    X(EXPORT, 3, 8, 0, 0, REGION, HANDLE)                                                   \
    /* i32 device, 64 handle bytes */                                                       \
    X(IMPORT, 4, 4 + FAB_HANDLE_BYTES, 0, 1, IMPORT, MEMORY)                                \
    /* u64 region id */                                                                     \
    X(RELEASE, 5, 8, 0, 0, REGION, RELEASE)                                                 \
    /* empty */                                                                             \
    X(STATS, 6, 0, 0, 0, EMPTY, STATS)                                                      \
    /* 64 handle bytes */                                                                   \
    X(VERIFY, 7, FAB_HANDLE_BYTES, 0, 0, VERIFY, VERIFY)                                    \
    /* i32 device, u32 handle types, u8 creator, 64 handle bytes, 16 token bytes (zero      \
     * unless creator); + memfd */                                                          \
    X(ADOPT, 8, 9 + FAB_HANDLE_BYTES + FAB__TOKEN_BYTES, 1, 1, ADOPT, MEMORY)               \
    /* u32 node index */                                                                    \
    X(TOPOLOGY, 9, 4, 0, 0, TOPOLOGY, TOPOLOGY)                                             \
    /* u8 kind, i32 device, u64 size; + memfd */                                            \
    X(IPC_PUBLISH, 10, 13, 1, 0, IPC_PUBLISH, IPC_HANDLE)                                   \
    /* 64 IPC handle bytes */                                                               \
    X(IPC_OPEN, 11, FAB__IPC_HANDLE_BYTES, 0, 1, IPC_HANDLE, IPC_OPEN)                      \
    /* 64 IPC handle bytes */                                                               \
    X(IPC_WITHDRAW, 12, FAB__IPC_HANDLE_BYTES, 0, 0, IPC_HANDLE, EMPTY)                     \
    /* u8 op, u8 key, u32 target, i32 value (src/daemon/fieldfaults.h) */                        \
    X(FAULT, 13, 10, 0, 0, FAULT, EMPTY)                                                    \
    /* i32 device, u8 count (1..FAB__IMPORT_MANY_MAX), count x 64 handle bytes (protocol 6) \
     */                                                                                     \
    X(IMPORT_MANY, 14, 5, 0, FAB__IMPORT_MANY_MAX, IMPORT_MANY, IMPORT_MANY)                \
    /* Multicast teams (src/daemon/teams.h): every MC_* request has the same 44-byte    \
     * body, fab__request_t.u.mc, each type reading the fields it names here.               \
     * id: the token region; device, count (devices), types, size, mc_offset (the           \
     * granularity); the reply brings the team's token fd */                                \
    X(MC_CREATE, 15, FAB__MC_BODY, 0, 1, MC, MC)                                            \
    /* nothing; + the token's fd; the reply brings the staging and shadow memfds */         \
    X(MC_JOIN, 16, FAB__MC_BODY, 1, 2, MC, MC)                                              \
    /* id (member), device */                                                               \
    X(MC_ADD, 17, FAB__MC_BODY, 0, 0, MC, MC)                                               \
    /* id, device, size, mc_offset, mem_offset; + the memory's fd */                        \
    X(MC_BIND, 18, FAB__MC_BODY, 1, 0, MC, MC)                                              \
    /* id, device, size, mc_offset */                                                       \
    X(MC_UNBIND, 19, FAB__MC_BODY, 0, 0, MC, MC)                                            \
    /* id; or ranged (multimem.st, published at once): id, size (bytes), mc_offset; or      \
     * with an operation (multimem.red): id, types (FAB__MC_OP_*), count (elements), size   \
     * (count x the element's bytes), mc_offset; the bytes are the staging copy's there */  \
    X(MC_SYNC, 20, FAB__MC_BODY, 0, 0, MC, MC)                                              \
    /* id, count (elements), types (FAB__MC_OP_*), mc_offset */                             \
    X(MC_REDUCE, 21, FAB__MC_BODY, 0, 0, MC, MC)                                            \
    /* id */                                                                                \
    X(MC_LEAVE, 22, FAB__MC_BODY, 0, 0, MC, MC)

#define FAB__MSG_ENUM_(name, num, body, fds_in, fds_out, rq, rp) FAB__MSG_##name = num,
#define FAB__MSG_COUNT_(name, num, body, fds_in, fds_out, rq, rp) +1
enum {
    FAB__MSG_LIST(FAB__MSG_ENUM_)
    /* Numbered 1 to the count (fab__msgs' designated rows, each given
     * once, check that no two share a number). */
    FAB__MSG_TYPE_MAX = 0 FAB__MSG_LIST(FAB__MSG_COUNT_),
    FAB__MSG_REPLY = 0x8000,
};
#undef FAB__MSG_ENUM_
#undef FAB__MSG_COUNT_

/* The body layouts of the list's last two columns. */
enum {
    FAB__RQ_NONE, FAB__RQ_HELLO, FAB__RQ_ALLOC, FAB__RQ_REGION, FAB__RQ_IMPORT, FAB__RQ_EMPTY,
    FAB__RQ_VERIFY, FAB__RQ_ADOPT, FAB__RQ_TOPOLOGY, FAB__RQ_IPC_PUBLISH, FAB__RQ_IPC_HANDLE,
    FAB__RQ_FAULT, FAB__RQ_IMPORT_MANY, FAB__RQ_MC,
};
enum {
    FAB__RP_NONE, FAB__RP_HELLO, FAB__RP_ALLOC, FAB__RP_HANDLE, FAB__RP_MEMORY, FAB__RP_RELEASE,
    FAB__RP_STATS, FAB__RP_VERIFY, FAB__RP_TOPOLOGY, FAB__RP_IPC_HANDLE, FAB__RP_IPC_OPEN,
    FAB__RP_EMPTY, FAB__RP_IMPORT_MANY, FAB__RP_MC,
};

/* One row of the list, by type number (row 0 and numbers past
 * FAB__MSG_TYPE_MAX: all zeros, no message). */
typedef struct fab__msg_row {
    const char *name;
    uint16_t request_body;
    uint8_t request_fds;
    uint8_t reply_fds;
    uint8_t request_layout; /* FAB__RQ_* */
    uint8_t reply_layout;   /* FAB__RP_* */
} fab__msg_row_t;
extern const fab__msg_row_t fab__msgs[FAB__MSG_TYPE_MAX + 1];

/* The row of type, or the empty row 0 for a number that names no message. */
static inline const fab__msg_row_t *fab__msg(uint32_t type)
{
    return &fab__msgs[type <= FAB__MSG_TYPE_MAX ? type : 0];
}

/* A decoded request. */
typedef struct fab__request {
    uint16_t type;
    uint32_t seq;
    union {
        struct {
            uint32_t version;
            uint8_t name_len;
            char name[256]; /* NUL-terminated */
        } hello;
        struct {
            int32_t device;
            uint64_t size;
            uint8_t peer_access;
            uint32_t handle_type;
        } alloc;
        struct {
            uint64_t region;
        } region; /* EXPORT and RELEASE */
        struct {
            uint32_t node;
        } topology;
        struct {
            int32_t device;
            fab_handle_t handle;
            uint32_t handle_type; /* ADOPT only */
            uint8_t creator;      /* ADOPT only: 1 if the sender allocated it */
            uint8_t token[FAB__TOKEN_BYTES]; /* ADOPT only: the creator's proof */
        } import; /* IMPORT, VERIFY (device unused) and ADOPT */
        struct {
            uint8_t kind; /* FAB__IPC_KIND_* */
            int32_t device;
            uint64_t size;
        } ipc_publish;
        struct {
            uint8_t bytes[FAB__IPC_HANDLE_BYTES];
        } ipc; /* IPC_OPEN and IPC_WITHDRAW */
        struct {
            int32_t device;
            uint8_t count; /* handles[0..count) of the request hold the handles */
        } import_many;
        struct {
            uint64_t id;         /* the member (MC_CREATE: the token region) */
            int32_t device;      /* an ordinal on the sender's node */
            uint32_t count;      /* MC_CREATE: numDevices; MC_REDUCE: elements */
            uint32_t types;      /* MC_CREATE: handle types; MC_REDUCE: FAB__MC_OP_* */
            uint64_t size;       /* per device (MC_CREATE), or of the bind */
            uint64_t mc_offset;  /* MC_CREATE: the granularity */
            uint64_t mem_offset; /* MC_BIND: in the memory */
        } mc; /* every MC_* request */
        struct {
            uint8_t op;      /* FAB__FAULT_OP_* */
            uint8_t key;     /* FAB__FAULT_KEY_* (SET), else 0 */
            uint32_t target; /* node index (SET) or channel number (CHANNEL) */
            int32_t value;   /* the key's value; CHANNEL: 1 withdraw, 0 restore */
        } fault;
    } u;
    uint8_t flags;     /* FAB__REQUEST_WAITS */
    uint8_t nreleases; /* released region ids carried, dropped before the answer */
    uint64_t releases[FAB__PROTO_RELEASES_MAX];
    /* IMPORT_MANY's handles, the first u.import_many.count of them: kept out
     * of the union, past the released ids, so that decoding any other
     * request clears and copies no more than before. */
    fab_handle_t handles[FAB__IMPORT_MANY_MAX];
} fab__request_t;

/* FAULT: the owner of the daemon changes the emulated fabric at run time
 * (fabmem fault; docs/fabric.md); its ops and keys, FAB__FAULT_OP_* and
 * FAB__FAULT_KEY_*, are the fault vocabulary's (src/common/faultwords.h).
 * The reply has no body. */

/* MC_REDUCE's operations over every bind: a sum of 32-bit elements (a pair
 * of halves or bfloat16s for the x2 sums, summed in float, rounded once), or
 * the least or greatest of 64-bit unsigned elements (the count is of
 * elements, and the offset a multiple of their size). A ranged MC_SYNC's
 * (multimem.red) fold the staging copy's elements into every bind with the
 * same operations, and ADD_U64 besides. */
enum {
    FAB__MC_OP_ADD_F32 = 1,
    FAB__MC_OP_ADD_U32 = 2,
    FAB__MC_OP_ADD_F16X2 = 3,
    FAB__MC_OP_ADD_BF16X2 = 4,
    FAB__MC_OP_MIN_U64 = 5,
    FAB__MC_OP_MAX_U64 = 6,
    FAB__MC_OP_ADD_U64 = 7, /* a ranged MC_SYNC's operation only (multimem.red) */
};

/* The first page of a member's shadow memfd (MC_JOIN's second fd), which
 * only the daemon writes: how far the team is. The member waits on
 * ndevices as a futex; the daemon wakes it when a device is added and when
 * a member leaves a team that is not complete (lost). */
#define FAB__MC_SHADOW_PAGE 4096u /* the reply's shadow_pages counts these */
typedef struct fab__mc_state {
    uint32_t ndevices;    /* added so far */
    uint32_t num_devices; /* the team's size */
    uint32_t lost;        /* a member left before the team was complete */
    uint32_t binds;       /* binds ever made (the team is closed to ADD) */
} fab__mc_state_t;

/* What ALLOC, IMPORT and ADOPT replies say of the memory they hand out. */
typedef struct fab__reply_memory {
    uint64_t region; /* the reference's id on this connection */
    fab_uuid_t uuid;
    uint64_t size;
    uint8_t access; /* what the receiver may map */
    int32_t device;
    uint8_t kind; /* IMPORT, version 7: a FAB__MEMORY_*; FAB__MEMORY_UNSAID otherwise */
} fab__reply_memory_t;

/* What an IMPORT reply says the memory is. UNSAID (a daemon before version
 * 7, or a reply that does not say) is encoded as no byte at all. */
#define FAB__MEMORY_UNSAID 0u
#define FAB__MEMORY_PLAIN 1u    /* memory, no multicast team's token */
#define FAB__MEMORY_MC_TOKEN 2u /* a team's token: MC_JOIN makes a member */

/* A decoded reply: the header, and on success the body of its type. An
 * error reply has no body. */
/* STATS: the daemon's counters, as fab_client_stats hands them out
 * (fab_daemon_stats_t, fabmem/fabric.h, the client's copy). */
typedef struct fab__stats {
    uint64_t pid, clients, allocations, references, bytes, rss;
} fab__stats_t;

typedef struct fab__reply {
    uint16_t type; /* the request type, without FAB__MSG_REPLY */
    uint32_t seq;
    uint32_t status;
    union {
        struct {
            int32_t node; /* the node index */
            uint32_t driver_version;
        } hello;
        struct {
            fab__reply_memory_t memory;
            fab_handle_t handle; /* the allocation's own (no export counted) */
            uint8_t token[FAB__TOKEN_BYTES]; /* the creator token, for ADOPT */
        } alloc;
        struct {
            fab_handle_t handle;
        } exported; /* EXPORT */
        fab__reply_memory_t import; /* IMPORT and ADOPT */
        struct {
            fab_uuid_t uuid;
            uint32_t unimported; /* exports never imported */
        } release;
        fab__stats_t stats;
        struct {
            uint8_t live;
        } verify;
        struct {
            uint32_t node_count;
            uint32_t driver_version;
            fab__node_t node;
        } topology;
        struct {
            uint8_t bytes[FAB__IPC_HANDLE_BYTES];
        } ipc_publish;
        struct {
            uint8_t kind;
            int32_t device;
            uint64_t size;
        } ipc_open; /* + the memfd */
        struct {
            uint8_t count; /* the request's */
            struct {
                uint32_t status;            /* that import's fab_status_t */
                fab__reply_memory_t memory; /* on success; zeros otherwise */
            } entries[FAB__IMPORT_MANY_MAX];
        } import_many; /* + one fd per successful entry, in order */
        struct {
            uint64_t id;           /* MC_JOIN: the member; MC_BIND: the bind */
            uint64_t size;         /* per device */
            uint64_t granularity;
            uint32_t num_devices;
            uint32_t handle_types;
            int32_t creator_node;
            uint32_t shadow_pages; /* pages before the snapshot in the shadow memfd */
        } mc; /* every MC_* reply; MC_JOIN's + the staging and shadow memfds */
    } u;
} fab__reply_t;

/* Encode a request / reply into buf (FAB__PROTO_MAX bytes); return the length. */
size_t fab__request_encode(const fab__request_t *request, uint8_t *buf);
size_t fab__reply_encode(const fab__reply_t *reply, uint8_t *buf);

/* Decode len bytes. FAB_SUCCESS, or FAB_ERROR_INVALID_VALUE for a message that
 * is malformed (bad magic, unknown type, wrong length, bad field). Both
 * decode in place (no copy of the message through the stack: the daemon
 * decodes every request, the client every reply), so on failure *out holds
 * parts of the bad message and is not to be read. The request decoder is
 * the daemon's first line of defence and is fuzzed (fuzz/fuzz_request.c). A
 * decoded request is its header, its released ids (the first nreleases) and
 * its union zeroed but for what the body says (an IMPORT's member alone: no
 * reader of an IMPORT looks past it). A decoded reply is its header and its
 * type's member of the union (zeros where the body says nothing, and all of
 * it for an error reply); the union's other bytes are left as they were,
 * since no reader looks at another type's member. */
fab_status_t fab__request_decode(const uint8_t *buf, size_t len, fab__request_t *out);
fab_status_t fab__reply_decode(const uint8_t *buf, size_t len, fab__reply_t *out);

/* Send one message with an optional fd (-1: none). 0, or -1 with errno. */
int fab__proto_send(int sock, const uint8_t *buf, size_t len, int fd);

/* Send one message with nfds fds (at most FAB__PROTO_FDS_MAX) in one
 * SCM_RIGHTS control message, in order. 0, or -1 with errno. */
int fab__proto_send_fds(int sock, const uint8_t *buf, size_t len, const int *fds, unsigned nfds);

/* Receive one message into buf (FAB__PROTO_MAX bytes) and the fds that came
 * with it, in order, into fds (FAB__PROTO_FDS_MAX entries; *nfds_out of them
 * are set). Returns its length, 0 when the peer closed, or -1 with errno
 * (every fd closed): a message longer than the buffer, or more fds than
 * FAB__PROTO_FDS_MAX, is EMSGSIZE. *lost_out says the kernel could not give
 * us every fd that was sent (MSG_CTRUNC: this process is out of
 * descriptors): those after the *nfds_out received are gone, the message is
 * whole. A receive a signal cuts short is -1 with EINTR, for the caller's
 * deadline to see (a socket with SO_RCVTIMEO is not restarted by SA_RESTART,
 * and a receive begun again would begin its timeout again too). */
ssize_t fab__proto_recv_fds(int sock, uint8_t *buf, int *fds, unsigned *nfds_out, int *lost_out,
                            int flags);

/* Receive one message into buf (FAB__PROTO_MAX bytes). Returns its length, 0
 * when the peer closed, or -1 with errno; a message longer than the buffer is
 * an error (EMSGSIZE). Every fd that came with it is closed except the first,
 * which is stored in *fd_out (-1 if none); fd_out NULL closes them all. When
 * the kernel could not give us the fd (MSG_CTRUNC: this process is out of
 * descriptors) the message is still returned, whole, with *fd_out set to
 * FAB__FD_LOST: the stream is intact, only that one fd is gone. A receive a
 * signal cuts short is begun again. */
#define FAB__FD_LOST (-2)
ssize_t fab__proto_recv(int sock, uint8_t *buf, int *fd_out, int flags);

/* Wait until sock is readable or deadline (CLOCK_MONOTONIC, ms; < 0: none)
 * passes. 1 readable (or hung up), 0 timed out, -1 error. */
int fab__proto_wait(int sock, int64_t deadline_ms);

/* Now on CLOCK_MONOTONIC, in ms. */
int64_t fab__now_ms(void);

/* The socket path: explicit, else $FABMEM_SOCKET, else
 * $XDG_RUNTIME_DIR/fabmem/fabmemd.sock, else /tmp/fabmem-$UID/fabmemd.sock.
 * 0, or -1 if it does not fit. */
int fab__socket_path(const char *explicit_path, char *buf, size_t cap);

struct sockaddr_un;

/* addr set to the Unix socket at path. 0, or -1 with errno ENAMETOOLONG when
 * path does not fit sun_path (107 bytes and its NUL). */
int fab__sockaddr_un(const char *path, struct sockaddr_un *addr);

/* Whom a socket directory must belong to. */
typedef enum fab__dir_rule {
    FAB__DIR_DAEMON, /* the daemon's own uid */
    FAB__DIR_CLIENT, /* the client's own uid, or root (a shared daemon) */
} fab__dir_rule_t;

/* Check that the directory holding path's last component could not hold a
 * socket planted by someone else: it is a real directory (lstat: not a
 * symbolic link), owned as rule says, and writable by nobody else (no group
 * or other write bit, sticky or not). 0, or -1 with errno (EPERM for a broken
 * rule) and, when why is not NULL, a sentence naming the path and the rule in
 * why (cap bytes). */
int fab__socket_dir_check(const char *path, fab__dir_rule_t rule, char *why, size_t cap);

/* Create that directory if missing (mode 0700), then check it as
 * fab__socket_dir_check does. */
int fab__socket_dir_make(const char *path, fab__dir_rule_t rule, char *why, size_t cap);

#endif /* FABMEM_COMMON_PROTO_H */
