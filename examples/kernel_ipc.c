/* Several processes share one allocation and each launches a kernel on it,
 * written against cuda.h only.
 *
 * The parent makes a POSIX_FD-shareable allocation with cuMemCreate, maps it,
 * and starts three workers by running itself again ("kernel_ipc worker N").
 * Over a Unix socket pair each worker receives the allocation's fd
 * (SCM_RIGHTS), imports it, maps it, grants itself access, loads a module from
 * the PTX text below, and launches its kernel "stamp" over its own slice of
 * the memory. The parent then checks every slice.
 *
 * With fabmem, "stamp" runs on the CPU as written, on the PTX engine; run
 * with FABMEM_KERNELS naming the library built from kernel_ipc_kernels.c,
 * its C implementation runs instead. */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define WORKERS 3
#define COUNT 4096 /* values each worker writes */

/* The kernel, as a compiler would emit it for
 *   extern "C" __global__ void stamp(unsigned *out, unsigned worker, unsigned count)
 * (the PTX engine runs it as written; with FABMEM_KERNELS naming
 * kernel_ipc_kernels, that CPU implementation takes its place). */
static const char stamp_ptx[] =
    ".version 8.0\n"
    ".target sm_80\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry stamp(\n"
    "    .param .u64 stamp_out,\n"
    "    .param .u32 stamp_worker,\n"
    "    .param .u32 stamp_count\n"
    ")\n"
    "{\n"
    "    .reg .pred %p<2>;\n"
    "    .reg .b32 %r<10>;\n"
    "    .reg .b64 %rd<5>;\n"
    "    ld.param.u64 %rd1, [stamp_out];\n"
    "    ld.param.u32 %r1, [stamp_worker];\n"
    "    ld.param.u32 %r2, [stamp_count];\n"
    "    mov.u32 %r3, %ctaid.x;\n"
    "    mov.u32 %r4, %ntid.x;\n"
    "    mov.u32 %r5, %tid.x;\n"
    "    mad.lo.s32 %r6, %r3, %r4, %r5;\n"
    "    setp.ge.u32 %p1, %r6, %r2;\n"
    "    @%p1 bra DONE;\n"
    "    mad.lo.s32 %r7, %r1, %r2, %r6;\n"
    "    mul.lo.s32 %r8, %r1, 1000000;\n"
    "    add.s32 %r9, %r8, %r6;\n"
    "    cvta.to.global.u64 %rd2, %rd1;\n"
    "    mul.wide.u32 %rd3, %r7, 4;\n"
    "    add.s64 %rd4, %rd2, %rd3;\n"
    "    st.global.u32 [%rd4], %r9;\n"
    "DONE:\n"
    "    ret;\n"
    "}\n";

#define CHECK(call)                                                                 \
    do {                                                                            \
        CUresult r_ = (call);                                                       \
        if (r_ != CUDA_SUCCESS) {                                                   \
            const char *name_ = NULL;                                               \
            cuGetErrorName(r_, &name_);                                             \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,           \
                    name_ ? name_ : "?");                                           \
            exit(1);                                                                \
        }                                                                           \
    } while (0)

static int send_fd(int sock, int fd)
{
    char byte = 'F';
    struct iovec iov = {&byte, 1};
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } c;
    memset(&c, 0, sizeof(c));
    struct msghdr m = {0};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = c.buf;
    m.msg_controllen = sizeof(c.buf);
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(h), &fd, sizeof(int));
    return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
    char byte;
    struct iovec iov = {&byte, 1};
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } c;
    struct msghdr m = {0};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = c.buf;
    m.msg_controllen = sizeof(c.buf);
    if (recvmsg(sock, &m, 0) != 1)
        return -1;
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    if (!h || h->cmsg_type != SCM_RIGHTS)
        return -1;
    int fd;
    memcpy(&fd, CMSG_DATA(h), sizeof(int));
    return fd;
}

static size_t buffer_size(void)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    size_t gran = 0;
    CHECK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    size_t want = (size_t)WORKERS * COUNT * sizeof(uint32_t);
    return (want + gran - 1) / gran * gran;
}

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

static CUcontext init(void)
{
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CHECK(cuCtxSetCurrent(ctx));
    return ctx;
}

static int worker(unsigned index, int sock)
{
    init();
    int fd = recv_fd(sock);
    if (fd < 0) {
        fprintf(stderr, "worker %u: no fd\n", index);
        return 1;
    }
    CUmemGenericAllocationHandle h;
    CHECK(cuMemImportFromShareableHandle(&h, (void *)(uintptr_t)fd,
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    close(fd);
    size_t size = buffer_size();
    CUdeviceptr ptr = map_rw(h, size);

    CUmodule mod;
    CUfunction stamp;
    CHECK(cuModuleLoadDataEx(&mod, stamp_ptx, 0, NULL, NULL));
    CHECK(cuModuleGetFunction(&stamp, mod, "stamp"));
    unsigned count = COUNT, threads = 256;
    void *args[] = {&ptr, &index, &count};
    CHECK(cuLaunchKernel(stamp, (count + threads - 1) / threads, 1, 1, threads, 1, 1, 0, NULL, args,
                         NULL));
    CHECK(cuCtxSynchronize());
    CHECK(cuModuleUnload(mod));

    CHECK(cuMemUnmap(ptr, size));
    CHECK(cuMemRelease(h));
    CHECK(cuMemAddressFree(ptr, size));
    char done = 'D';
    return write(sock, &done, 1) == 1 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "worker") == 0)
        return worker((unsigned)atoi(argv[2]), atoi(argv[3]));

    init();
    size_t size = buffer_size();
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    CUmemGenericAllocationHandle h;
    CHECK(cuMemCreate(&h, size, &prop, 0));
    CUdeviceptr ptr = map_rw(h, size);
    CHECK(cuMemsetD8(ptr, 0, size));
    int fd = -1;
    CHECK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));

    /* This program's own path, to run it again as each worker. */
    char self[4096];
    ssize_t self_len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (self_len <= 0) {
        perror("readlink /proc/self/exe");
        return 1;
    }
    self[self_len] = '\0';
    pid_t pids[WORKERS];
    int socks[WORKERS];
    for (unsigned i = 0; i < WORKERS; i++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
            perror("socketpair");
            return 1;
        }
        pids[i] = fork();
        if (pids[i] == 0) {
            /* A fresh process image: CUDA state does not survive fork(). */
            int child = dup(sv[1]); /* without CLOEXEC: it crosses the exec */
            char index[16], sock[16];
            snprintf(index, sizeof(index), "%u", i);
            snprintf(sock, sizeof(sock), "%d", child);
            execl(self, argv[0], "worker", index, sock, (char *)NULL);
            _exit(127);
        }
        close(sv[1]);
        socks[i] = sv[0];
        if (pids[i] < 0 || send_fd(socks[i], fd) != 0) {
            fprintf(stderr, "cannot start worker %u\n", i);
            return 1;
        }
    }
    close(fd);
    int failed = 0;
    for (unsigned i = 0; i < WORKERS; i++) {
        char done = 0;
        if (read(socks[i], &done, 1) != 1 || done != 'D')
            failed = 1;
        int status = 0;
        waitpid(pids[i], &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            failed = 1;
        close(socks[i]);
    }
    if (failed) {
        fprintf(stderr, "a worker failed\n");
        return 1;
    }

    uint32_t *values = malloc((size_t)WORKERS * COUNT * sizeof(uint32_t));
    CHECK(cuMemcpyDtoH(values, ptr, (size_t)WORKERS * COUNT * sizeof(uint32_t)));
    for (unsigned w = 0; w < WORKERS; w++) {
        for (unsigned i = 0; i < COUNT; i++) {
            if (values[w * COUNT + i] != w * 1000000u + i) {
                fprintf(stderr, "worker %u's value %u is %u\n", w, i, values[w * COUNT + i]);
                return 1;
            }
        }
    }
    free(values);
    CHECK(cuMemUnmap(ptr, size));
    CHECK(cuMemRelease(h));
    CHECK(cuMemAddressFree(ptr, size));
    printf("%d workers launched their kernel on one shared allocation: every value checks\n",
           WORKERS);
    return 0;
}
