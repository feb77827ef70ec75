/* The 64-importer crews (crew.h): the workers' three loops, their start,
 * rounds, CPU time and stop. */
#include "crew.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_common.h"
#include "src/common/proto.h"

/* Map fd's memory, touch its first byte, unmap it and close fd: the end of
 * every crew's import. 0, or -1 when the map fails. */
static int map_touch_close(int fd)
{
    void *p = fd < 0 ? MAP_FAILED : mmap(NULL, CREW_MAP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return -1;
    ((volatile char *)p)[0];
    munmap(p, CREW_MAP_SIZE);
    close(fd);
    return 0;
}

/* The minimal client: what any client of fabmemd must do and nothing more.
 * Its own connection and HELLO, then for each import one IMPORT request
 * (encoded by the protocol's own encoder, the previous import's region id
 * riding on it as the library's releases do), the reply decoded by the
 * protocol's decoder, and the map, touch, unmap and close; no region
 * record, lock, deadline or fork check. The daemon serves it exactly as it
 * serves the library (every check included), so minimal next to bare is the
 * daemon's and the wire's share of an import, and fabric next to minimal
 * the client library's. -1 on failure. */
static int minimal_connect(void)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    const char *path = getenv("FABMEM_SOCKET");
    if (path == NULL || strlen(path) >= sizeof(addr.sun_path))
        return -1;
    int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (sock < 0)
        return -1;
    memcpy(addr.sun_path, path, strlen(path) + 1);
    fab__request_t hello = {.type = FAB__MSG_HELLO, .seq = 1};
    hello.u.hello.version = FAB__PROTO_VERSION;
    uint8_t buf[FAB__PROTO_MAX];
    size_t len = fab__request_encode(&hello, buf);
    fab__reply_t reply;
    ssize_t n;
    if (connect(sock, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
        fab__proto_send(sock, buf, len, -1) != 0 || (n = fab__proto_recv(sock, buf, NULL, 0)) <= 0 ||
        fab__reply_decode(buf, (size_t)n, &reply) != FAB_SUCCESS || reply.status != FAB_SUCCESS) {
        close(sock);
        return -1;
    }
    return sock;
}

static int minimal_loop(int sock, const fab_handle_t *handle, int iterations)
{
    static uint32_t seq = 1;   /* HELLO was 1 */
    static uint64_t last;      /* the region to release with the next request */
    fab__request_t request;
    memset(&request, 0, offsetof(fab__request_t, releases));
    request.type = FAB__MSG_IMPORT;
    request.flags = FAB__REQUEST_WAITS;
    request.u.import.handle = *handle;
    for (int i = 0; i < iterations; i++) {
        uint8_t buf[FAB__PROTO_MAX];
        request.seq = ++seq;
        request.nreleases = last != 0;
        request.releases[0] = last;
        size_t len = fab__request_encode(&request, buf);
        int fd = -1;
        fab__reply_t reply;
        ssize_t n;
        if (fab__proto_send(sock, buf, len, -1) != 0 || (n = fab__proto_recv(sock, buf, &fd, 0)) <= 0 ||
            fab__reply_decode(buf, (size_t)n, &reply) != FAB_SUCCESS ||
            reply.status != FAB_SUCCESS || reply.seq != seq || fd < 0)
            return -1;
        last = reply.u.import.region;
        if (map_touch_close(fd) != 0)
            return -1;
    }
    return 0;
}

int crew_bare_loop(int sock, int iterations)
{
    char req[64] = {0};
    for (int i = 0; i < iterations; i++) {
        if (send(sock, req, sizeof(req), 0) != sizeof(req) || map_touch_close(recv_fd(sock)) != 0)
            return -1;
    }
    return 0;
}

/* One worker's loop of count imports, by its crew's kind. */
static int crew_loop(enum crew_kind kind, int sock, fab_client_t *client,
                     const fab_handle_t *handle, int count)
{
    switch (kind) {
    case CREW_BARE:
        return crew_bare_loop(sock, count);
    case CREW_FABRIC:
        return crew_fabric_loop(client, handle, count);
    case CREW_MINIMAL:
        return minimal_loop(sock, handle, count);
    }
    return -1;
}

/* Start the crew on cpu (< 0: two cores, as above): its workers import
 * handle (not read by a bare crew). 0 on success, once every worker is
 * warm. */
int crew_start(struct crew *crew, enum crew_kind kind, const fab_handle_t *handle, int cpu)
{
    int socks[CREW], done[2], ready[2];
    if (pipe(done) != 0 || pipe(ready) != 0)
        return -1;
    memset(crew, 0, sizeof(*crew));
    for (int i = 0; i < CREW; i++) {
        int sv[2] = {-1, -1}, cmd[2];
        if ((kind == CREW_BARE && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) ||
            pipe2(cmd, O_CLOEXEC) != 0)
            return -1;
        crew->pids[i] = fork();
        if (crew->pids[i] == 0) {
            close(cmd[1]);
            close(done[0]);
            close(ready[0]);
            for (int j = 0; j < i; j++)
                close(crew->cmd[j]);
            pin(0, cpu < 0 ? i % 2 : cpu);
            fab_client_t *client = NULL;
            int sock = kind == CREW_MINIMAL ? minimal_connect() : sv[1];
            if ((kind == CREW_FABRIC && fab_client_connect(NULL, &client) != FAB_SUCCESS) ||
                (kind == CREW_MINIMAL && sock < 0))
                _exit(2);
            int count = CREW_WARM;
            char byte = 'r';
            if (crew_loop(kind, sock, client, handle, count) != 0 || write(ready[1], &byte, 1) != 1)
                _exit(2);
            while (read(cmd[0], &count, sizeof(count)) == sizeof(count) && count > 0) {
                /* 'f' says this worker failed: its crewmates hold the pipe
                 * open, so its exit alone would not end the round. */
                byte = crew_loop(kind, sock, client, handle, count) == 0 ? 'r' : 'f';
                if (write(done[1], &byte, 1) != 1 || byte == 'f')
                    _exit(1);
            }
            if (client != NULL)
                fab_client_close(client);
            _exit(0);
        }
        close(cmd[0]);
        crew->cmd[i] = cmd[1];
        if (kind == CREW_BARE) {
            close(sv[1]);
            socks[i] = sv[0];
        }
    }
    close(done[1]);
    close(ready[1]);
    crew->done = done[0];
    if (kind == CREW_BARE) {
        crew->server = fork();
        if (crew->server == 0) {
            pin(0, cpu < 0 ? 1 : cpu);
            epoll_serve(socks, CREW, CREW_MAP_SIZE);
        }
        for (int i = 0; i < CREW; i++)
            close(socks[i]);
    }
    for (int i = 0; i < CREW; i++) {
        char byte;
        if (read(ready[0], &byte, 1) != 1)
            return -1;
    }
    close(ready[0]);
    return 0;
}

/* Nanoseconds pid has run on a CPU (the first field of /proc/PID/schedstat:
 * exact, where getrusage's ticks are 10 ms), 0 where it cannot be read. */
static uint64_t run_ns(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%ld/schedstat", (long)pid);
    FILE *f = fopen(path, "r");
    unsigned long long ns = 0;
    if (f != NULL) {
        if (fscanf(f, "%llu", &ns) != 1)
            ns = 0;
        fclose(f);
    }
    return ns;
}

/* What a crew's server (the bare one or fabmemd) and its workers ran. */
void crew_cpu(const struct crew *crew, pid_t server, uint64_t *server_ns,
                     uint64_t *workers_ns)
{
    *server_ns = run_ns(server);
    *workers_ns = 0;
    for (int i = 0; i < CREW; i++)
        *workers_ns += run_ns(crew->pids[i]);
}

/* Imports per second with the first `workers` of the crew doing `each`
 * rounds at once. */
double crew_round(struct crew *crew, int workers, int each)
{
    double t0 = now_s();
    for (int i = 0; i < workers; i++) {
        if (write(crew->cmd[i], &each, sizeof(each)) != sizeof(each))
            return -1;
    }
    int ok = 1;
    for (int i = 0; i < workers; i++) {
        char byte;
        if (read(crew->done, &byte, 1) != 1)
            return -1;
        ok &= byte == 'r';
    }
    return ok ? (double)workers * each / (now_s() - t0) : -1;
}

/* Another crew's workers hold this one's pipes too: a count of 0 says stop. */
void crew_stop(struct crew *crew)
{
    int stop = 0;
    for (int i = 0; i < CREW; i++) {
        if (write(crew->cmd[i], &stop, sizeof(stop)) != sizeof(stop))
            kill(crew->pids[i], SIGTERM);
        close(crew->cmd[i]);
    }
    for (int i = 0; i < CREW; i++)
        waitpid(crew->pids[i], NULL, 0);
    if (crew->server > 0)
        waitpid(crew->server, NULL, 0);
    close(crew->done);
}
