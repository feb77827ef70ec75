/* The daemon's memory per live allocation at 100,000 and 1,000,000
 * allocations, on machines whose fd limit forbids a real fabmemd from holding
 * that many memfds (each live allocation holds one; bench_fabric measures a
 * real daemon as far as the limit lets it).
 *
 * The registry is the daemon's whole state; here it runs in this process and
 * is fed HELLO and ALLOC requests exactly as the event loop feeds them. One
 * memfd stands in for every allocation's (memfd_create and close are wrapped at
 * link time), so what grows is only what the daemon itself spends per
 * allocation: heap in use (mallinfo2) and resident memory. The kernel's
 * per-memfd objects are not the daemon's memory and are not counted here, as
 * they are not in bench_fabric's RSS figure either.
 *
 * Usage: bench_registry [COUNT...]   (default 100000 1000000) */
#include <malloc.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "src/daemon/registry.h"
#include "src/common/log.h"

int __real_memfd_create(const char *name, unsigned flags);
int __wrap_memfd_create(const char *name, unsigned flags);
int __real_close(int fd);
int __wrap_close(int fd);

static int shared_fd = -1;

int __wrap_memfd_create(const char *name, unsigned flags)
{
    if (shared_fd < 0)
        shared_fd = __real_memfd_create(name, flags);
    return shared_fd;
}

int __wrap_close(int fd)
{
    return fd == shared_fd ? 0 : __real_close(fd);
}

/* The shared memfd is sealed once; later allocations' seals are already on. */
int __real_fcntl(int fd, int cmd, ...);
int __wrap_fcntl(int fd, int cmd, ...);

int __wrap_fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    long arg = va_arg(ap, long);
    va_end(ap);
    if (fd == shared_fd && cmd == F_ADD_SEALS)
        return 0;
    return __real_fcntl(fd, cmd, arg);
}

static long rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * sysconf(_SC_PAGESIZE);
}

/* Bytes malloc has handed out: the arena's chunks and the large blocks it
 * mmaps on its own (the registry's hash tables, once they grow). */
static size_t heap_bytes(void)
{
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int measure(long count)
{
    char config[] = "/tmp/bench_registry.XXXXXX";
    int cfd = mkstemp(config);
    if (cfd < 0)
        return 1;
    /* Room for a million 2 MiB allocations over 8 GPUs, a channel for us,
     * and no per-user limit on allocations. */
    char text[192];
    int len = snprintf(text, sizeof(text),
                       "[daemon]\nmax_allocations_per_uid = 0\n"
                       "[node n0]\ngpu_memory = 1T\n[channel 0]\nuids = %u\n",
                       (unsigned)getuid());
    if (write(cfd, text, (size_t)len) != len)
        return 1;
    __real_close(cfd);
    fab_topology_t *topology = NULL;
    fab_status_t status = fab_topology_load(config, &topology);
    unlink(config);
    if (status != FAB_SUCCESS) {
        fprintf(stderr, "bench_registry: topology: %s\n", fab_status_name(status));
        return 1;
    }
    static const uint8_t key[FAB__KEY_BYTES] = {7};
    fab__registry_t *daemon = fab__registry_create(topology, key);
    fab__conn_t *conn = daemon ? fab__registry_conn_open(daemon, getuid(), getgid(), getpid()) : NULL;
    if (conn == NULL)
        return 1;
    fab__request_t request;
    fab__reply_t reply;
    fab__reply_fds_t fds;
    memset(&request, 0, sizeof(request));
    request.type = FAB__MSG_HELLO;
    request.u.hello.version = FAB__PROTO_VERSION;
    fab__registry_answer(daemon, conn, &request, -1, &reply, &fds);
    if (reply.status != FAB_SUCCESS) {
        fprintf(stderr, "bench_registry: HELLO: %u\n", reply.status);
        return 1;
    }

    size_t heap_before = heap_bytes();
    long rss_before = rss_bytes();
    double t0 = now();
    memset(&request, 0, sizeof(request));
    request.type = FAB__MSG_ALLOC;
    request.u.alloc.size = (uint64_t)2 << 20;
    request.u.alloc.peer_access = FAB_ACCESS_READ_WRITE;
    request.u.alloc.handle_type = FAB_HANDLE_TYPE_FABRIC;
    for (long i = 0; i < count; i++) {
        request.seq = (uint32_t)i;
        request.u.alloc.device = (int32_t)(i % 8);
        fab__registry_answer(daemon, conn, &request, -1, &reply, &fds);
        if (reply.status != FAB_SUCCESS) {
            fprintf(stderr, "bench_registry: ALLOC %ld: %u\n", i, reply.status);
            return 1;
        }
    }
    double t = now() - t0;
    size_t heap_after = heap_bytes();
    long rss_after = rss_bytes();
    if (fab__registry_alloc_count(daemon) != (size_t)count) {
        fprintf(stderr, "bench_registry: %zu live, wanted %ld\n", fab__registry_alloc_count(daemon), count);
        return 1;
    }
    printf("%9ld live allocations: heap %7.1f bytes each, RSS %7.1f bytes each (%.1f s to create)\n",
           count, (double)(heap_after - heap_before) / (double)count,
           (double)(rss_after - rss_before) / (double)count, t);
    fab__registry_conn_close(daemon, conn);
    fab__registry_destroy(daemon);
    fab_topology_destroy(topology);
    malloc_trim(0);
    return 0;
}

int main(int argc, char **argv)
{
    fab__log_set_level(FAB__LOG_ERROR);
    printf("bench_registry: the daemon's registry in-process, one memfd standing in for all\n");
    if (argc == 1)
        return measure(100000) || measure(1000000);
    for (int i = 1; i < argc; i++) {
        long count = strtol(argv[i], NULL, 10);
        if (count <= 0 || measure(count) != 0)
            return 1;
    }
    return 0;
}
