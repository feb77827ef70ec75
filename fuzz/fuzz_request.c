/* Fuzz target for fabmemd's request path: the decoder (fab__request_decode)
 * and, for what decodes, the registry that answers it (fab__registry_answer),
 * so that any byte sequence a client may send is run through the same code
 * the daemon runs, sockets aside.
 *
 * Input: a sequence of messages, each a 2-byte little-endian length and that
 * many bytes. One connection per input; it is closed at the end, which must
 * free everything the input allocated (the leak checker sees to that).
 *
 * What a client holds and the fuzzer cannot forge (a keyed tag, a keyed token,
 * a descriptor) is substituted, so that the checks past it are reached:
 *   - handle: an IMPORT, VERIFY or ADOPT whose handle starts with a zero byte
 *     presents the last handle this input got (ALLOC or EXPORT reply); bytes 1
 *     and 2 of such a handle, if nonzero, alter one byte of it (byte 1 says
 *     which, byte 2 is XORed in); so does each handle of an IMPORT_MANY;
 *   - token: an ADOPT with creator=1 and an all-zero token presents the
 *     creator token of this input's last ALLOC reply;
 *   - fd: an ADOPT comes with the descriptor that the low 3 bits of its
 *     sequence number choose: 0 a sealed mode-0400 memfd of the handle's size
 *     (fab__memfd_create, what a client sends), 1 a new descriptor of the last
 *     memory this input was handed (ALLOC or IMPORT reply: the same memory as
 *     the allocation), 2 an unsealed memfd of that size, 3 a sealed memfd of
 *     another size, 4 none, 5 a pipe's read end, 6 FAB__FD_LOST (the kernel
 *     could not pass it), 7 a read-only descriptor of a sealed memfd of that
 *     size;
 *   - IPC: an IPC_PUBLISH comes with a descriptor chosen as an ADOPT's (its
 *     size the request's); an IPC_OPEN or IPC_WITHDRAW whose bytes start
 *     with a zero byte presents the last IPC handle this input got (an
 *     IPC_PUBLISH reply), altered by bytes 1 and 2 as a handle is;
 *   - multicast: an MC_CREATE whose id is 1 names the region of this
 *     input's last ALLOC reply (0 asks for a token memfd, as a POSIX-only
 *     team does); any other MC_* request whose id is 0 presents the member
 *     id of the last MC_JOIN reply; an MC_JOIN and an MC_BIND come with a
 *     descriptor chosen as an ADOPT's (choice 1, the last memory handed,
 *     is the token an MC_CREATE or ALLOC reply carried; the size an
 *     MC_BIND's memory offset and size, an MC_JOIN's one 2 MiB granule);
 *   - peer: a request whose sequence number has bit 3 set goes through a
 *     second connection (another pid, so that IPC_OPEN is not a self-open),
 *     which must say HELLO for itself;
 *   - restart: an empty message is a daemon restart. The connection is
 *     closed (freeing what it held) and the rest of the input talks, on a new
 *     connection, to a new daemon with the same key: an empty registry without
 *     tombstones, as after fabmemd restarted. The handles, token and memory
 *     the input holds survive it, so that ADOPT can bring them back and park
 *     importers that come before their creator. That daemon is destroyed at
 *     the end of the input; the first one lives across inputs. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "src/daemon/fieldfaults.h"
#include "src/daemon/registry.h"
#include "src/common/log.h"
#include "src/common/memfd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t fuzz_key[FAB__KEY_BYTES] = {1, 2, 3};
static fab_topology_t *fuzz_topology;

static fab__registry_t *fuzz_daemon(void)
{
    static fab__registry_t *daemon;
    if (daemon == NULL) {
        fab__log_set_level(FAB__LOG_ERROR);
        unsetenv("FABMEM_CONFIG");
        if (fab_topology_load(NULL, &fuzz_topology) != FAB_SUCCESS)
            abort();
        /* Small per-uid limits, so that an input reaches their refusals. */
        fuzz_topology->limits.references = 64;
        fuzz_topology->limits.ipc_entries = 8;
        daemon = fab__registry_create(fuzz_topology, fuzz_key);
        if (daemon == NULL)
            abort();
    }
    return daemon;
}

/* A handle that starts with a zero byte: the last handle, altered as its
 * bytes 1 and 2 say (see the top comment). */
static void fuzz_substitute(fab_handle_t *handle, const fab_handle_t *last)
{
    if (handle->bytes[0] != 0)
        return;
    uint8_t where = handle->bytes[1];
    uint8_t flip = handle->bytes[2];
    *handle = *last;
    handle->bytes[where % FAB_HANDLE_BYTES] ^= flip;
}

/* The descriptor an ADOPT comes with: choice (0..7) as the top comment says,
 * size the handle's, last the input's last memory (-1: none). -1 when there
 * is none, or when making it failed (a size no memfd can have). */
static int fuzz_adopt_fd(unsigned choice, uint64_t size, int last)
{
    int fd = -1, other = -1;
    int pipefd[2];
    switch (choice) {
    case 0:
        if (fab__memfd_create("fuzz", size, &fd) != FAB_SUCCESS)
            fd = -1;
        return fd;
    case 1:
        return last >= 0 ? dup(last) : -1;
    case 2:
        if (size > (uint64_t)INT64_MAX)
            return -1;
        fd = memfd_create("fuzz", MFD_CLOEXEC);
        if (fd >= 0 && ftruncate(fd, (off_t)size) != 0) {
            close(fd);
            fd = -1;
        }
        return fd;
    case 3:
        if (fab__memfd_create("fuzz", size + 1, &fd) != FAB_SUCCESS)
            fd = -1;
        return fd;
    case 4:
        return -1;
    case 5:
        if (pipe(pipefd) != 0)
            return -1;
        close(pipefd[1]);
        return pipefd[0];
    case 6:
        return FAB__FD_LOST;
    default:
        if (fab__memfd_create("fuzz", size, &other) != FAB_SUCCESS)
            return -1;
        fd = fab__memfd_reopen_read_only(other);
        close(other);
        return fd;
    }
}

static bool fuzz_all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != 0)
            return false;
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fab__registry_t *daemon = fuzz_daemon();
    fab__registry_t *restarted = NULL; /* after an empty message */
    fab__conn_t *conn = fab__registry_conn_open(daemon, getuid(), getgid(), 1);
    if (conn == NULL)
        return 0;
    fab__conn_t *peer = fab__registry_conn_open(daemon, getuid(), getgid(), 2);
    if (peer == NULL) {
        fab__registry_conn_close(daemon, conn);
        return 0;
    }
    uint8_t last_ipc[FAB__IPC_HANDLE_BYTES] = {0};
    fab_handle_t last = {{0}};
    uint8_t last_token[FAB__TOKEN_BYTES] = {0};
    int last_fd = -1; /* our own descriptor of the last memory handed to us */
    uint64_t last_region = 0, last_member = 0;
    while (size >= 2) {
        size_t len = (size_t)data[0] | (size_t)data[1] << 8;
        data += 2;
        size -= 2;
        if (len > size)
            len = size;
        fab__request_t request;
        if (len == 0) {
            fab__registry_conn_close(daemon, conn);
            fab__registry_conn_close(daemon, peer);
            if (restarted != NULL)
                fab__registry_destroy(restarted);
            daemon = restarted = fab__registry_create(fuzz_topology, fuzz_key);
            if (restarted == NULL)
                abort();
            conn = fab__registry_conn_open(daemon, getuid(), getgid(), 1);
            peer = fab__registry_conn_open(daemon, getuid(), getgid(), 2);
            if (conn == NULL || peer == NULL)
                abort();
        } else if (fab__request_decode(data, len, &request) == FAB_SUCCESS) {
            if (request.type == FAB__MSG_IMPORT || request.type == FAB__MSG_VERIFY ||
                request.type == FAB__MSG_ADOPT)
                fuzz_substitute(&request.u.import.handle, &last);
            if (request.type == FAB__MSG_IMPORT_MANY) {
                for (unsigned i = 0; i < request.u.import_many.count; i++)
                    fuzz_substitute(&request.handles[i], &last);
            }
            int fd_in = -1;
            if (request.type == FAB__MSG_ADOPT) {
                if (request.u.import.creator &&
                    fuzz_all_zero(request.u.import.token, FAB__TOKEN_BYTES))
                    memcpy(request.u.import.token, last_token, FAB__TOKEN_BYTES);
                fd_in = fuzz_adopt_fd(request.seq & 7u,
                                      (uint64_t)fab_handle_size(&request.u.import.handle),
                                      last_fd);
            }
            if (request.type == FAB__MSG_IPC_PUBLISH)
                fd_in = fuzz_adopt_fd(request.seq & 7u, request.u.ipc_publish.size, last_fd);
            if (request.type >= FAB__MSG_MC_CREATE && request.type <= FAB__MSG_MC_LEAVE) {
                if (request.type == FAB__MSG_MC_CREATE && request.u.mc.id == 1)
                    request.u.mc.id = last_region;
                else if (request.type != FAB__MSG_MC_CREATE && request.u.mc.id == 0)
                    request.u.mc.id = last_member;
                if (request.type == FAB__MSG_MC_JOIN)
                    fd_in = fuzz_adopt_fd(request.seq & 7u, 2u << 20, last_fd);
                if (request.type == FAB__MSG_MC_BIND)
                    fd_in = fuzz_adopt_fd(request.seq & 7u,
                                          request.u.mc.mem_offset + request.u.mc.size, last_fd);
            }
            if ((request.type == FAB__MSG_IPC_OPEN || request.type == FAB__MSG_IPC_WITHDRAW) &&
                request.u.ipc.bytes[0] == 0) {
                uint8_t where = request.u.ipc.bytes[1];
                uint8_t flip = request.u.ipc.bytes[2];
                memcpy(request.u.ipc.bytes, last_ipc, FAB__IPC_HANDLE_BYTES);
                request.u.ipc.bytes[where % FAB__IPC_HANDLE_BYTES] ^= flip;
            }
            fab__reply_t reply;
            fab__reply_fds_t fds;
            fab__conn_t *from = (request.seq & 8u) != 0 ? peer : conn;
            fab__registry_answer(daemon, from, &request, fd_in, &reply, &fds);
            if (reply.status == FAB__FAULT_DEFERRED) {
                /* Held by a hung IMEX: the event loop would answer it at
                 * its deadline with the faults unchanged. */
                fab__registry_answer_expired(daemon, from, &request, &reply, &fds);
                if (reply.status == FAB__FAULT_DEFERRED)
                    abort();
            }
            if (request.type == FAB__MSG_IPC_PUBLISH && reply.status == FAB_SUCCESS)
                memcpy(last_ipc, reply.u.ipc_publish.bytes, FAB__IPC_HANDLE_BYTES);
            /* One fd per successful import, none for a failed one. */
            unsigned want_fds = 0;
            if (request.type == FAB__MSG_IMPORT_MANY && reply.status == FAB_SUCCESS) {
                for (unsigned i = 0; i < reply.u.import_many.count; i++)
                    want_fds += reply.u.import_many.entries[i].status == FAB_SUCCESS;
                if (fds.count != want_fds)
                    abort();
            }
            if (request.type == FAB__MSG_MC_JOIN && reply.status == FAB_SUCCESS && fds.count != 2)
                abort(); /* the staging and shadow memfds */
            if (fds.count > 0 && request.type != FAB__MSG_MC_JOIN) {
                /* Keep the memory, as a client that maps it does (a team's
                 * token stays the last memory across its MC_JOINs). */
                if (last_fd >= 0)
                    close(last_fd);
                last_fd = dup(fds.fd[fds.count - 1]);
            }
            fab__reply_fds_release(&fds);
            if (request.type == FAB__MSG_EXPORT && reply.status == FAB_SUCCESS)
                last = reply.u.exported.handle;
            if (request.type == FAB__MSG_MC_JOIN && reply.status == FAB_SUCCESS)
                last_member = reply.u.mc.id;
            if (request.type == FAB__MSG_ALLOC && reply.status == FAB_SUCCESS) {
                last_region = reply.u.alloc.memory.region;
                last = reply.u.alloc.handle;
                memcpy(last_token, reply.u.alloc.token, FAB__TOKEN_BYTES);
            }
            /* The reply must round-trip through its own codec (a held reply
             * never goes on the wire: answered at its deadline above). */
            uint8_t buf[FAB__PROTO_MAX];
            fab__reply_t back;
            size_t n = fab__reply_encode(&reply, buf);
            if (fab__reply_decode(buf, n, &back) != FAB_SUCCESS || back.status != reply.status ||
                fab__reply_encode(&back, buf + FAB__PROTO_MAX / 2) != n ||
                memcmp(buf, buf + FAB__PROTO_MAX / 2, n) != 0)
                abort();
        }
        data += len;
        size -= len;
    }
    fab__registry_conn_close(daemon, conn);
    fab__registry_conn_close(daemon, peer);
    if (restarted != NULL)
        fab__registry_destroy(restarted);
    if (last_fd >= 0)
        close(last_fd);
    /* Field faults (FAULT) are written into the topology every input shares:
     * put the config's back, so that each input starts from the same one. */
    fab__request_t reset = {.type = FAB__MSG_FAULT};
    reset.u.fault.op = FAB__FAULT_OP_RESET;
    (void)fab__faults_apply(fab__registry_faults(fuzz_daemon()), &reset);
    return 0;
}
