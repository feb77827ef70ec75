/* The import users call, through cuda.h, next to the bare mechanism it is
 * built on, measured in the same rounds. Not a timed test: run it by hand.
 *
 *   driver  cuMemImportFromShareableHandle (a FABRIC handle another process
 *           exported), cuMemAddressReserve, cuMemMap, cuMemSetAccess, a
 *           touch, cuMemUnmap, cuMemRelease, cuMemAddressFree; fabmemd serves
 *   bare    a one-byte request to the simplest server (blocking, one thread),
 *           the memfd back over SCM_RIGHTS, then the same reserve (mmap
 *           PROT_NONE), map (mmap MAP_FIXED), mprotect, touch, munmap, close
 *   epoll   the same client, and a server like the daemon's: its socket in
 *           an epoll set, a non-blocking receive per wakeup
 *
 * Each importer is a long-lived process (pinned, connected and warmed before
 * any clock runs) told over a pipe how many imports to do; it times them
 * itself. The three take turns of a few hundred imports (twenty turns to a
 * round by default; the order rotating, so that none always runs right after
 * the same one): the host's own noise, which lasts longer than a turn, then
 * falls on all three alike, and a round's ratios are those of neighbours.
 * Each importer and its server run on one core and then on two; each setting
 * prints min / median / max of the per-round times and of the per-round
 * ratios. Then, apart from the timed rounds, one round of each under
 * counters: system calls (perf's raw_syscalls:sys_enter, syscall_counter.h:
 * root or perf_event_paranoid -1) and context switches (/proc) per import,
 * client and server apiece.
 *
 * The trust rules stay on: the daemon checks every import as it always does
 * (the importer's channel, the handle's uuid and secret, the exporter's
 * grant), and the memfd it hands out is sealed.
 *
 * Usage: cuda_fabric_import [--smoke] [imports per round, default 5000]
 * [rounds, default 9] [imports per turn, default 250; the round's count is
 * cut to whole turns]. --smoke: a few imports a round, for the test that
 * keeps this program working (it exits non-zero when a round fails). The
 * daemon is $FABMEM_DAEMON, else the one built next to this program. */
#include <cuda.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench_common.h"
#include "bench_cuda.h"
#include "syscall_counter.h"

#define SIZE (2u * 1024 * 1024) /* one granule of the default device */
#define ROUNDS_MAX 99

enum { DRIVER, BARE, EPOLL, KINDS };
static const char *kind_names[KINDS] = {"driver", "bare", "epoll"};

/* A worker: the importer process, its command and result pipes, its server. */
struct worker {
    pid_t pid, server;
    int cmd, result;
};

static int failed;

static void fail(const char *what)
{
    if (!failed)
        fprintf(stderr, "cuda_fabric_import: %s\n", what);
    failed = 1;
}

/* ---- the importers' loops: 0, or -1 on the first failure (never inlined,
 * so that callgrind --toggle-collect can count them alone) ---- */

__attribute__((noinline)) static int driver_loop(const CUmemFabricHandle *handle, int count)
{
    CUmemAccessDesc access;
    memset(&access, 0, sizeof(access));
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = 0;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    for (int i = 0; i < count; i++) {
        CUmemGenericAllocationHandle h;
        CUdeviceptr p;
        if (cuMemImportFromShareableHandle(&h, (void *)handle, CU_MEM_HANDLE_TYPE_FABRIC) !=
            CUDA_SUCCESS)
            return -1;
        if (cuMemAddressReserve(&p, SIZE, 0, 0, 0) != CUDA_SUCCESS ||
            cuMemMap(p, SIZE, 0, h, 0) != CUDA_SUCCESS ||
            cuMemSetAccess(p, SIZE, &access, 1) != CUDA_SUCCESS)
            return -1;
        ((volatile char *)(uintptr_t)p)[0];
        if (cuMemUnmap(p, SIZE) != CUDA_SUCCESS || cuMemRelease(h) != CUDA_SUCCESS ||
            cuMemAddressFree(p, SIZE) != CUDA_SUCCESS)
            return -1;
    }
    return 0;
}

__attribute__((noinline)) static int bare_loop(int sock, int count)
{
    for (int i = 0; i < count; i++) {
        char byte = 'i';
        if (send(sock, &byte, 1, 0) != 1)
            return -1;
        int fd = recv_fd(sock);
        void *r = fd < 0 ? MAP_FAILED
                         : mmap(NULL, SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                                -1, 0);
        if (r == MAP_FAILED ||
            mmap(r, SIZE, PROT_NONE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED ||
            mprotect(r, SIZE, PROT_READ | PROT_WRITE) != 0)
            return -1;
        ((volatile char *)r)[0];
        munmap(r, SIZE);
        close(fd);
    }
    return 0;
}

/* The simplest server: one blocking receive, one send, on one socket. */
static void blocking_serve(int sock)
{
    int memfd = memfd_create("bare", MFD_CLOEXEC);
    if (memfd < 0 || ftruncate(memfd, SIZE) != 0)
        _exit(1);
    char req[64];
    while (recv(sock, req, sizeof(req), 0) > 0) {
        if (send_fd(sock, memfd) != 0)
            break;
    }
    _exit(0);
}

/* ---- the workers ---- */

static int run_loop(int kind, int sock, const CUmemFabricHandle *handle, int count)
{
    return kind == DRIVER ? driver_loop(handle, count) : bare_loop(sock, count);
}

/* The importer process: warm up, say so, then run each count it is given
 * and answer with ns per import (negative: it failed). */
static void worker_main(int kind, int sock, const CUmemFabricHandle *handle, int cmd, int result)
{
    if (kind == DRIVER) {
        CUcontext ctx;
        if (cuInit(0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&ctx, 0) != CUDA_SUCCESS ||
            cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
            _exit(2);
    }
    double ns = run_loop(kind, sock, handle, 64) == 0 ? 0 : -1;
    if (write(result, &ns, sizeof(ns)) != sizeof(ns) || ns < 0)
        _exit(2);
    int count;
    while (read(cmd, &count, sizeof(count)) == sizeof(count) && count > 0) {
        double t0 = now_s();
        int rc = run_loop(kind, sock, handle, count);
        ns = rc == 0 ? (now_s() - t0) * 1e9 / count : -1;
        if (write(result, &ns, sizeof(ns)) != sizeof(ns))
            _exit(2);
    }
    _exit(0);
}

static int worker_start(struct worker *w, int kind, const CUmemFabricHandle *handle)
{
    int cmd[2], result[2], sv[2] = {-1, -1};
    if (pipe2(cmd, O_CLOEXEC) != 0 || pipe2(result, O_CLOEXEC) != 0 ||
        (kind != DRIVER && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0))
        return -1;
    w->server = 0;
    if (kind != DRIVER) {
        w->server = fork();
        if (w->server == 0) {
            close(sv[1]);
            if (kind == BARE)
                blocking_serve(sv[0]);
            epoll_serve(&sv[0], 1, SIZE);
        }
        close(sv[0]);
    }
    w->pid = fork();
    if (w->pid == 0) {
        close(cmd[1]);
        close(result[0]);
        worker_main(kind, sv[1], handle, cmd[0], result[1]);
    }
    close(cmd[0]);
    close(result[1]);
    if (sv[1] >= 0)
        close(sv[1]);
    w->cmd = cmd[1];
    w->result = result[0];
    double ready;
    return read(w->result, &ready, sizeof(ready)) == sizeof(ready) && ready == 0 ? 0 : -1;
}

/* ns per import over count imports (negative: failed). */
static double worker_round(struct worker *w, int count)
{
    double ns = -1;
    if (write(w->cmd, &count, sizeof(count)) != sizeof(count) ||
        read(w->result, &ns, sizeof(ns)) != sizeof(ns) || !(ns > 0)) {
        fail("a round failed");
        return -1;
    }
    return ns;
}

/* The other workers hold this one's pipes too: a count of 0 says stop. */
static void worker_stop(struct worker *w)
{
    int stop = 0;
    if (write(w->cmd, &stop, sizeof(stop)) != sizeof(stop))
        kill(w->pid, SIGTERM);
    close(w->cmd);
    close(w->result);
    waitpid(w->pid, NULL, 0);
    if (w->server > 0)
        waitpid(w->server, NULL, 0); /* its socket closed with the worker */
}

/* ---- the exporter: another process, as in a real job ---- */

/* Make a FABRIC allocation of SIZE and write its handle to out; stay until
 * hold reaches EOF. */
static void exporter_main(int out, int hold)
{
    CUcontext ctx;
    CUmemAllocationProp prop = device_prop(0, CU_MEM_HANDLE_TYPE_FABRIC);
    CUmemGenericAllocationHandle h;
    CUmemFabricHandle fh;
    if (cuInit(0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&ctx, 0) != CUDA_SUCCESS ||
        cuCtxSetCurrent(ctx) != CUDA_SUCCESS || cuMemCreate(&h, SIZE, &prop, 0) != CUDA_SUCCESS ||
        cuMemExportToShareableHandle(&fh, h, CU_MEM_HANDLE_TYPE_FABRIC, 0) != CUDA_SUCCESS)
        _exit(2);
    if (write(out, &fh, sizeof(fh)) != sizeof(fh))
        _exit(2);
    char byte;
    while (read(hold, &byte, 1) > 0) {
    }
    cuMemRelease(h);
    _exit(0);
}

/* ---- printing ---- */

static void print_row(const char *setting, const char *what, double *v, int n, int ratio)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    if (ratio)
        printf("  %-10s %-13s %8.2fx %8.2fx %8.2fx\n", setting, what, v[0], v[n / 2], v[n - 1]);
    else
        printf("  %-10s %-13s %7.2fus %7.2fus %7.2fus\n", setting, what, v[0] / 1000,
               v[n / 2] / 1000, v[n - 1] / 1000);
}

/* One round of each kind under counters: per import, client and server. */
static void print_counts(const char *setting, struct worker *w, const pid_t *servers, int count)
{
    printf("  %-10s per import: system calls client + server, context switches client + server\n",
           setting);
    for (int k = 0; k < KINDS; k++) {
        int mine = syscall_counter(w[k].pid, 0), theirs = syscall_counter(servers[k], 0);
        double s0 = counter_value(mine), d0 = counter_value(theirs);
        double w0 = proc_switches(w[k].pid), v0 = proc_switches(servers[k]);
        worker_round(&w[k], count);
        double s1 = counter_value(mine), d1 = counter_value(theirs);
        double w1 = proc_switches(w[k].pid), v1 = proc_switches(servers[k]);
        if (mine >= 0 && theirs >= 0)
            printf("  %-10s %-8s %5.1f + %5.1f syscalls, %5.2f + %5.2f switches\n", "",
                   kind_names[k], (s1 - s0) / count, (d1 - d0) / count, (w1 - w0) / count,
                   (v1 - v0) / count);
        else
            printf("  %-10s %-8s (system calls: no perf) %5.2f + %5.2f switches\n", "",
                   kind_names[k], (w1 - w0) / count, (v1 - v0) / count);
        if (mine >= 0)
            close(mine);
        if (theirs >= 0)
            close(theirs);
    }
}

int main(int argc, char **argv)
{
    int smoke = 0, per = 5000, rounds = 9, turn = 250, positional = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--smoke") == 0) {
            smoke = 1;
        } else if (positional < 3 && atoi(argv[i]) > 0) {
            int *v[] = {&per, &rounds, &turn};
            *v[positional++] = atoi(argv[i]);
        } else {
            fprintf(stderr, "usage: %s [--smoke] [imports per round] [rounds] [imports per turn]\n",
                    argv[0]);
            return 2;
        }
    }
    if (smoke)
        per = 50, rounds = 3, turn = 25;
    if (rounds > ROUNDS_MAX)
        rounds = ROUNDS_MAX;
    if (turn > per)
        turn = per;
    int turns = per / turn;
    per = turns * turn; /* whole turns */
    const char *exe = getenv("FABMEM_DAEMON");
    if (exe == NULL)
        exe = FABMEM_DAEMON_PATH;
    char dir[] = "/tmp/cuda_fabric_import.XXXXXX", sock[300], config[300];
    if (mkdtemp(dir) == NULL)
        return 1;
    snprintf(sock, sizeof(sock), "%s/fabmemd.sock", dir);
    snprintf(config, sizeof(config), "%s/bench.ini", dir);
    FILE *f = fopen(config, "w");
    if (f == NULL)
        return 1;
    /* The default node's devices, and a channel for this user: the import
     * is checked as any job's is. */
    fprintf(f, "[node bench]\ngpus = 8\ngpu_memory = 80G\ngranularity = 2M\n"
               "[channel 0]\nuids = %lu\n", (unsigned long)getuid());
    fclose(f);
    pid_t daemon = daemon_start(exe, sock, config);
    if (daemon < 0)
        return 1;
    setenv("FABMEM_SOCKET", sock, 1);
    setenv("FABMEM_NO_AUTOSTART", "1", 1);

    int handle_pipe[2], hold[2];
    CUmemFabricHandle handle;
    if (pipe(handle_pipe) != 0 || pipe(hold) != 0)
        return 1;
    pid_t exporter = fork();
    if (exporter == 0) {
        close(handle_pipe[0]);
        close(hold[1]);
        exporter_main(handle_pipe[1], hold[0]);
    }
    close(handle_pipe[1]);
    close(hold[0]);
    if (read(handle_pipe[0], &handle, sizeof(handle)) != sizeof(handle)) {
        fprintf(stderr, "cuda_fabric_import: the exporter did not export\n");
        daemon_stop(daemon);
        return 1;
    }
    close(handle_pipe[0]);

    struct worker w[KINDS];
    for (int k = 0; k < KINDS; k++) {
        if (worker_start(&w[k], k, &handle) != 0) {
            fprintf(stderr, "cuda_fabric_import: the %s importer did not start\n", kind_names[k]);
            return 1;
        }
    }
    pid_t servers[KINDS] = {daemon, w[BARE].server, w[EPOLL].server};

    printf("cuda_fabric_import: %d rounds of %d imports, driver, bare and epoll taking turns of "
           "%d, %u KiB (one granule)\n", rounds, per, turn, SIZE / 1024);
    printf("  driver: cuMemImportFromShareableHandle (FABRIC) + AddressReserve + Map + SetAccess "
           "+ touch + Unmap + Release + AddressFree\n");
    printf("  bare:   1-byte request, memfd over SCM_RIGHTS (blocking one-thread server) + "
           "reserve + map + mprotect + touch + munmap + close\n");
    printf("  epoll:  the same, the server an epoll loop like fabmemd's\n");
    printf("  %-10s %-13s %9s %9s %9s\n", "importer/", "", "min", "median", "max");
    static const struct { const char *name; int client, server; } placements[] = {
        {"same core", 0, 0},
        {"two cores", 0, 1},
    };
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    for (int p = 0; p < 2; p++) {
        if (placements[p].server >= ncpu)
            continue;
        for (int k = 0; k < KINDS; k++) {
            pin(w[k].pid, placements[p].client);
            pin(servers[k], placements[p].server);
            worker_round(&w[k], per / 10 + 1); /* warm, where it now runs */
        }
        double t[KINDS][ROUNDS_MAX], ratio[3][ROUNDS_MAX];
        for (int r = 0; r < rounds; r++) {
            /* A round is `turns` turns of each kind, the three taking turns
             * (each going first, second and third in turn, so that none
             * always follows the same one): what disturbs the machine for
             * longer than a turn falls on all three alike. */
            for (int k = 0; k < KINDS; k++)
                t[k][r] = 0;
            for (int s = 0; s < turns; s++) {
                for (int i = 0; i < KINDS; i++) {
                    int k = (r + s + i) % KINDS;
                    t[k][r] += worker_round(&w[k], turn) / turns;
                }
            }
            ratio[0][r] = t[DRIVER][r] / t[BARE][r];
            ratio[1][r] = t[DRIVER][r] / t[EPOLL][r];
            ratio[2][r] = t[EPOLL][r] / t[BARE][r];
        }
        for (int k = 0; k < KINDS; k++)
            print_row(k == 0 ? placements[p].name : "", kind_names[k], t[k], rounds, 0);
        print_row("", "driver/bare", ratio[0], rounds, 1);
        print_row("", "driver/epoll", ratio[1], rounds, 1);
        print_row("", "epoll/bare", ratio[2], rounds, 1);
        print_counts(placements[p].name, w, servers, per);
    }
    for (int k = 0; k < KINDS; k++)
        worker_stop(&w[k]);
    close(hold[1]);
    waitpid(exporter, NULL, 0);
    daemon_stop(daemon);
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    return system(cmd) == 0 && !failed ? 0 : 1;
}
