/* A program's fallback from FABRIC to POSIX_FD sharing, written purely
 * against NVIDIA's driver API (cuda.h, -lcuda): nothing here knows fabmem.
 *
 * It asks cuMemCreate for memory exportable both as a fabric handle and as
 * a file descriptor. Where the fabric is refused (no IMEX channel for this
 * user: CUDA_ERROR_NOT_PERMITTED; no fabric at all: NOT_SUPPORTED) it drops
 * FABRIC and asks again for POSIX_FD alone, the pattern NCCL's allocator
 * follows. It then shares the memory with a second process (this program
 * re-run as "importer") through the handle type it got: the 64-byte fabric
 * handle as bytes, or the file descriptor passed over a Unix socket. It
 * prints which path it took.
 *
 * Against fabmem, both paths on one machine: with a fabric daemon and an
 * IMEX channel the FABRIC path; with
 *   FABMEM_FAULTS=cuMemCreate:NOT_PERMITTED@1
 * the first cuMemCreate is refused as a container without a channel would
 * refuse it, and the program takes its fallback path. */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(call)                                                                   \
    do {                                                                              \
        CUresult r_ = (call);                                                         \
        if (r_ != CUDA_SUCCESS) {                                                     \
            const char *name_ = "?";                                                  \
            cuGetErrorName(r_, &name_);                                               \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, name_); \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

static const char message[] = "written before the share";
static const char answer[] = "read and answered";

/* What the exporter sends first: the handle type and the size. */
typedef struct share_header {
    uint32_t handle_type;
    uint64_t size;
} share_header_t;

static int full_io(int fd, void *buf, size_t len, int writing)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = writing ? write(fd, p, len) : read(fd, p, len);
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int send_fd(int sock, int fd)
{
    char byte = 'f';
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof(control));
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = sizeof(control.buf)};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof(int));
    return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
    char byte;
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = sizeof(control.buf)};
    if (recvmsg(sock, &msg, 0) != 1)
        return -1;
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    if (!c || c->cmsg_type != SCM_RIGHTS)
        return -1;
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof(int));
    return fd;
}

/* Map a whole allocation read-write for device 0 at a fresh address. */
static CUdeviceptr map_rw(CUmemGenericAllocationHandle h, size_t size)
{
    CUdeviceptr ptr;
    CHECK(cuMemAddressReserve(&ptr, size, 0, 0, 0));
    CHECK(cuMemMap(ptr, size, 0, h, 0));
    CUmemAccessDesc access;
    memset(&access, 0, sizeof(access));
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = 0;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CHECK(cuMemSetAccess(ptr, size, &access, 1));
    return ptr;
}

static void unmap_free(CUdeviceptr ptr, size_t size)
{
    CHECK(cuMemUnmap(ptr, size));
    CHECK(cuMemAddressFree(ptr, size));
}

static void start_driver(void)
{
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CHECK(cuCtxSetCurrent(ctx));
}

/* Allocate size bytes (at least) on device 0 exportable as FABRIC and as
 * POSIX_FD; on a refusal of the fabric, as POSIX_FD alone. Returns the
 * handle type to share with. */
static CUmemAllocationHandleType allocate(CUmemGenericAllocationHandle *h, size_t *size)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    prop.requestedHandleTypes = (CUmemAllocationHandleType)(CU_MEM_HANDLE_TYPE_FABRIC |
                                                            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    CHECK(cuMemGetAllocationGranularity(size, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CUresult r = cuMemCreate(h, *size, &prop, 0);
    if (r == CUDA_SUCCESS)
        return CU_MEM_HANDLE_TYPE_FABRIC;
    if (r != CUDA_ERROR_NOT_PERMITTED && r != CUDA_ERROR_NOT_SUPPORTED)
        CHECK(r);
    const char *name = "?";
    cuGetErrorName(r, &name);
    printf("exporter: cuMemCreate with FABRIC refused (%s); retrying with POSIX_FD alone\n", name);
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    CHECK(cuMemGetAllocationGranularity(size, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CHECK(cuMemCreate(h, *size, &prop, 0));
    return CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
}

static int importer(int sock)
{
    start_driver();
    share_header_t hdr;
    if (full_io(sock, &hdr, sizeof(hdr), 0) != 0)
        return 1;
    CUmemGenericAllocationHandle h;
    if (hdr.handle_type == CU_MEM_HANDLE_TYPE_FABRIC) {
        CUmemFabricHandle fh;
        if (full_io(sock, fh.data, sizeof(fh.data), 0) != 0)
            return 1;
        CHECK(cuMemImportFromShareableHandle(&h, &fh, CU_MEM_HANDLE_TYPE_FABRIC));
    } else {
        int fd = recv_fd(sock);
        if (fd < 0)
            return 1;
        CHECK(cuMemImportFromShareableHandle(&h, (void *)(uintptr_t)fd,
                                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
        close(fd);
    }
    CUdeviceptr ptr = map_rw(h, hdr.size);
    char text[sizeof(message)];
    CHECK(cuMemcpyDtoH(text, ptr, sizeof(text)));
    printf("importer: read \"%s\" through a %s handle\n", text,
           hdr.handle_type == CU_MEM_HANDLE_TYPE_FABRIC ? "FABRIC" : "POSIX_FD");
    fflush(stdout);
    CHECK(cuMemcpyHtoD(ptr + 4096, answer, sizeof(answer)));
    unmap_free(ptr, hdr.size);
    CHECK(cuMemRelease(h));
    char done = 'd';
    return full_io(sock, &done, 1, 1) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "importer") == 0)
        return importer(atoi(argv[2]));

    start_driver();
    CUmemGenericAllocationHandle h;
    size_t size;
    CUmemAllocationHandleType type = allocate(&h, &size);
    const char *path = type == CU_MEM_HANDLE_TYPE_FABRIC ? "FABRIC" : "POSIX_FD";
    printf("exporter: path %s\n", path);
    CUdeviceptr ptr = map_rw(h, size);
    CHECK(cuMemcpyHtoD(ptr, message, sizeof(message)));

    /* This program's path, read before fork (execing /proc/self/exe would run
     * the wrong program under valgrind). */
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        return 1;
    self[n] = '\0';
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        /* A fresh process image: CUDA state must not cross a fork. */
        char fdtext[16];
        snprintf(fdtext, sizeof(fdtext), "%d", sv[1]);
        close(sv[0]);
        execl(self, argv[0], "importer", fdtext, (char *)NULL);
        _exit(127);
    }
    close(sv[1]);
    share_header_t hdr;
    memset(&hdr, 0, sizeof(hdr)); /* its padding goes over the socket too */
    hdr.handle_type = (uint32_t)type;
    hdr.size = size;
    int sent = full_io(sv[0], &hdr, sizeof(hdr), 1);
    if (sent == 0 && type == CU_MEM_HANDLE_TYPE_FABRIC) {
        CUmemFabricHandle fh;
        CHECK(cuMemExportToShareableHandle(&fh, h, CU_MEM_HANDLE_TYPE_FABRIC, 0));
        sent = full_io(sv[0], fh.data, sizeof(fh.data), 1);
    } else if (sent == 0) {
        int fd = -1;
        CHECK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
        sent = send_fd(sv[0], fd);
        close(fd);
    }
    char done = 0;
    int status = 1;
    if (sent == 0 && full_io(sv[0], &done, 1, 0) == 0) {
        char text[sizeof(answer)];
        CHECK(cuMemcpyDtoH(text, ptr + 4096, sizeof(text)));
        printf("exporter: the importer answered \"%s\" (shared through %s)\n", text, path);
        status = strcmp(text, answer) != 0;
    }
    close(sv[0]);
    int child = 0;
    waitpid(pid, &child, 0);
    unmap_free(ptr, size);
    CHECK(cuMemRelease(h));
    status = status || !WIFEXITED(child) || WEXITSTATUS(child) != 0;
    if (status == 0)
        printf("fabric_fallback: shared through %s, both processes done\n", path);
    return status;
}
