/* Two processes share GPU memory through a CUDA fabric handle, written purely
 * against NVIDIA's driver API (cuda.h, -lcuda): nothing here knows fabmem.
 *
 * The exporter allocates with cuMemCreate (FABRIC handle type), writes a
 * message, exports the 64-byte CUmemFabricHandle and sends it over a socket to
 * a second process (this program re-run as "importer"), which imports it,
 * maps it, reads the message and writes a reply into the same memory.
 *
 * Against fabmem's emulation (no GPU needed; a fabmemd is started on demand):
 *   cc cuda_fabric_exchange.c -I/usr/local/cuda/include -L<prefix>/lib/fabmem -lcuda
 *   LD_LIBRARY_PATH=<prefix>/lib/fabmem ./a.out
 * Against a real driver (a GPU with IMEX channels, e.g. GB200 NVL72), the same
 * source, unchanged:
 *   cc cuda_fabric_exchange.c -I/usr/local/cuda/include -lcuda && ./a.out */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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

static const char message[] = "hello through the fabric";
static const char reply[] = "and back again";

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

static CUcontext start_driver(void)
{
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CHECK(cuCtxSetCurrent(ctx));
    return ctx;
}

static int importer(int sock)
{
    start_driver();
    CUmemFabricHandle handle;
    uint64_t size;
    if (full_io(sock, &size, sizeof(size), 0) != 0 ||
        full_io(sock, handle.data, sizeof(handle.data), 0) != 0)
        return 1;
    CUmemGenericAllocationHandle h;
    CHECK(cuMemImportFromShareableHandle(&h, &handle, CU_MEM_HANDLE_TYPE_FABRIC));
    CUdeviceptr ptr = map_rw(h, size);
    char text[sizeof(message)];
    CHECK(cuMemcpyDtoH(text, ptr, sizeof(text)));
    printf("importer (pid %ld): read \"%s\"\n", (long)getpid(), text);
    CHECK(cuMemcpyHtoD(ptr + 4096, reply, sizeof(reply)));
    unmap_free(ptr, size);
    CHECK(cuMemRelease(h));
    char done = 'd';
    return full_io(sock, &done, 1, 1) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "importer") == 0)
        return importer(atoi(argv[2]));

    start_driver();
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
    size_t size;
    CHECK(cuMemGetAllocationGranularity(&size, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CUmemGenericAllocationHandle h;
    CUresult r = cuMemCreate(&h, size, &prop, 0);
    if (r == CUDA_ERROR_NOT_PERMITTED || r == CUDA_ERROR_NOT_SUPPORTED) {
        fprintf(stderr, "no IMEX channel for this user (or no fabric): nothing to show\n");
        return 0;
    }
    CHECK(r);
    CUdeviceptr ptr = map_rw(h, size);
    CHECK(cuMemcpyHtoD(ptr, message, sizeof(message)));
    CUmemFabricHandle handle;
    CHECK(cuMemExportToShareableHandle(&handle, h, CU_MEM_HANDLE_TYPE_FABRIC, 0));
    printf("exporter (pid %ld): wrote \"%s\", exported a %zu-byte fabric handle\n",
           (long)getpid(), message, sizeof(handle.data));
    fflush(stdout);

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
    uint64_t size64 = size;
    char done = 0;
    int status = 1;
    if (full_io(sv[0], &size64, sizeof(size64), 1) == 0 &&
        full_io(sv[0], handle.data, sizeof(handle.data), 1) == 0 && full_io(sv[0], &done, 1, 0) == 0) {
        char text[sizeof(reply)];
        CHECK(cuMemcpyDtoH(text, ptr + 4096, sizeof(text)));
        printf("exporter (pid %ld): the importer answered \"%s\"\n", (long)getpid(), text);
        status = strcmp(text, reply) != 0;
    }
    close(sv[0]);
    int child = 0;
    waitpid(pid, &child, 0);
    unmap_free(ptr, size);
    CHECK(cuMemRelease(h));
    return status || !WIFEXITED(child) || WEXITSTATUS(child) != 0;
}
