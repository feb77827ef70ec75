/* Fuzz target for fabmemd's request path: the decoder (fab__request_decode)
 * and, for what decodes, the registry that answers it (fab__daemon_handle),
 * so that any byte sequence a client may send is run through the same code
 * the daemon runs, sockets aside.
 *
 * Input: a sequence of messages, each a 2-byte little-endian length and that
 * many bytes. One connection per input; it is closed at the end, which must
 * free everything the input allocated (the leak checker sees to that). An
 * IMPORT, VERIFY or ADOPT whose handle starts with a zero byte presents the last
 * handle this input exported instead, so that the import path is reached
 * past the tag check; bytes 1 and 2 of such a handle, if nonzero, alter one
 * byte of it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "src/daemon/registry.h"
#include "src/common/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static fab__daemon_t *fuzz_daemon(void)
{
    static fab__daemon_t *daemon;
    static fab_topology_t *topology;
    if (daemon == NULL) {
        static const uint8_t key[FAB__KEY_BYTES] = {1, 2, 3};
        fab__log_set_level(FAB__LOG_ERROR);
        unsetenv("FABMEM_CONFIG");
        if (fab_topology_load(NULL, &topology) != FAB_SUCCESS)
            abort();
        daemon = fab__daemon_create(topology, key);
        if (daemon == NULL)
            abort();
    }
    return daemon;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fab__daemon_t *daemon = fuzz_daemon();
    fab__conn_t *conn = fab__daemon_conn_open(daemon, getuid(), getgid(), 1);
    if (conn == NULL)
        return 0;
    fab_handle_t last = {{0}};
    while (size >= 2) {
        size_t len = (size_t)data[0] | (size_t)data[1] << 8;
        data += 2;
        size -= 2;
        if (len > size)
            len = size;
        fab__request_t request;
        if (fab__request_decode(data, len, &request) == FAB_SUCCESS) {
            if ((request.type == FAB__MSG_IMPORT || request.type == FAB__MSG_VERIFY ||
                 request.type == FAB__MSG_ADOPT) &&
                request.u.import.handle.bytes[0] == 0) {
                uint8_t where = request.u.import.handle.bytes[1];
                uint8_t flip = request.u.import.handle.bytes[2];
                request.u.import.handle = last;
                request.u.import.handle.bytes[where % FAB_HANDLE_BYTES] ^= flip;
            }
            fab__reply_t reply;
            int fd, owned;
            /* ADOPT gets a memfd of the size its handle names, as a
             * client would send. */
            int fd_in = -1;
            if (request.type == FAB__MSG_ADOPT) {
                fd_in = memfd_create("fuzz", MFD_CLOEXEC);
                if (fd_in >= 0 &&
                    ftruncate(fd_in, (off_t)(fab_handle_size(&request.u.import.handle) & 0xffffffffu)) != 0) {
                    close(fd_in);
                    fd_in = -1;
                }
            }
            fab__daemon_handle(daemon, conn, &request, fd_in, &reply, &fd, &owned);
            if (owned)
                close(fd);
            if ((request.type == FAB__MSG_EXPORT || request.type == FAB__MSG_ALLOC) &&
                reply.status == FAB_SUCCESS)
                last = reply.handle;
            /* The reply must round-trip through its own codec. */
            uint8_t buf[FAB__PROTO_MAX];
            fab__reply_t back;
            size_t n = fab__reply_encode(&reply, buf);
            if (fab__reply_decode(buf, n, &back) != FAB_SUCCESS || back.status != reply.status)
                abort();
        }
        data += len;
        size -= len;
    }
    fab__daemon_conn_close(daemon, conn);
    return 0;
}
