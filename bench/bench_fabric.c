/* bench_fabric: what the fabric costs next to the bare mechanism it is built
 * on, measured in the same run. Not a timed test: run it by hand.
 *
 *   bare     a request over a Unix socket, an fd back with SCM_RIGHTS, mmap,
 *            munmap, close (a minimal server process hands out one memfd)
 *   fabric   fab_client_import + fab_region_map + fab_region_unmap +
 *            fab_region_release of a handle exported by another process
 *
 * The two alternate, round by round, with client and server (the bare server
 * process, or fabmemd) pinned to the same core and then to two cores; each
 * setting prints min / median / max of the per-round times and of the
 * per-round ratio. Then, for each setting, the system calls and context
 * switches per import, client and server together (system calls need perf's
 * raw_syscalls:sys_enter tracepoint: root, or perf_event_paranoid -1; context
 * switches come from getrusage and /proc).
 *
 * Then imports per second with 64 importer processes next to one, like with
 * like: the same pinning (daemon and importers on one core, then all on two),
 * the same number of imports per round, the crews taking turns round by
 * round: the bare one, the fabric one (the client library), and a minimal
 * client's (fabmemd through the wire protocol alone: the daemon's and the
 * wire's share of an import, apart from the library's); and
 * fab_client_import_many (16 handles sent together, answered in one daemon
 * wakeup) next to 16 fab_client_import calls.
 *
 * Last, the daemon's resident memory per live allocation at 100,000 and
 * 1,000,000 allocations (the fd limit is raised for that; run as root or with
 * a hard limit above a million). Usage: bench_fabric [--quick | --smoke]
 * [--no-rss] [--imports N [--importers P]], or --crew KIND [--rounds R].
 * --smoke: every part over a few imports and no memory figures, for the
 * test that keeps this program working (it exits non-zero when any round
 * fails). --imports N: N imports from one
 * importer (or N each from P at once) and nothing else, for
 * bench/daemon_instructions.sh, which runs the daemon under callgrind.
 * --crew bare|fabric|minimal [--rounds R]: that crew's 64-worker rounds
 * alone (R of them, 200 imports a worker each; two cores as above), its
 * imports/s and CPU per import, for a profiler (perf record -a) to watch.
 * The daemon is $FABMEM_DAEMON, else the one built next to this program. */
#include <errno.h>
#include <linux/perf_event.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fabmem.h"
#include "bench_common.h"
#include "crew.h"
#include "syscall_counter.h"

#define SIZE CREW_MAP_SIZE

static char dir[256];
static int failed; /* a round failed: exit non-zero at the end */

/* v, noting a failed round (a negative time or rate). */
static double checked(double v)
{
    if (!(v > 0)) {
        if (!failed)
            fprintf(stderr, "bench_fabric: a round failed\n");
        failed = 1;
    }
    return v;
}
static char sock_path[300];

/* ---- the bare mechanism (send_fd, recv_fd: bench_common.h) ---- */

/* ns per bare round: a server process (on server_cpu) answers 64-byte
 * requests with a memfd; this process (on client_cpu) asks. */
static double bench_bare(int iterations, int client_cpu, int server_cpu)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        pin(0, server_cpu);
        int memfd = memfd_create("bare", MFD_CLOEXEC);
        if (ftruncate(memfd, SIZE) != 0)
            _exit(1);
        char req[64];
        while (recv(sv[1], req, sizeof(req), 0) > 0) {
            if (send_fd(sv[1], memfd) != 0)
                break;
        }
        _exit(0);
    }
    close(sv[1]);
    pin(0, client_cpu);
    double t0 = now_s();
    if (crew_bare_loop(sv[0], iterations) != 0)
        return -1;
    double t = now_s() - t0;
    pin(0, -1);
    close(sv[0]);
    waitpid(pid, NULL, 0);
    return t * 1e9 / iterations;
}

/* ---- the fabric ---- */

/* 0: import_loop does import+map+unmap+release one at a time. N > 0: it
 * imports N at a time, with fab_client_import_many (batch_many) or N
 * fab_client_import calls, then releases the N (no mapping). */
#define BATCH 16
static int batch_n, batch_many;

static int batch_loop(fab_client_t *client, const fab_handle_t *handle, int iterations)
{
    fab_handle_t handles[BATCH];
    fab_region_t *regions[BATCH];
    for (int i = 0; i < batch_n; i++)
        handles[i] = *handle;
    for (int i = 0; i < iterations; i += batch_n) {
        if (batch_many) {
            if (fab_client_import_many(client, handles, (size_t)batch_n, 0, regions, NULL) !=
                FAB_SUCCESS)
                return -1;
        } else {
            for (int k = 0; k < batch_n; k++) {
                if (fab_client_import(client, handle, 0, &regions[k]) != FAB_SUCCESS)
                    return -1;
            }
        }
        for (int k = 0; k < batch_n; k++)
            fab_region_release(regions[k]);
    }
    return 0;
}

/* Import+map+unmap+release `iterations` times in this process. Never
 * inlined or split: callgrind's --toggle-collect=import_loop counts the
 * client's instructions an import by this name (docs/cuda.md). */
__attribute__((noinline, noclone)) static int import_loop(fab_client_t *client, const fab_handle_t *handle, int iterations)
{
    if (batch_n > 0)
        return batch_loop(client, handle, iterations);
    for (int i = 0; i < iterations; i++) {
        fab_region_t *region;
        void *p;
        if (fab_client_import(client, handle, 0, &region) != FAB_SUCCESS ||
            fab_region_map(region, FAB_ACCESS_READ_WRITE, &p) != FAB_SUCCESS)
            return -1;
        ((volatile char *)p)[0];
        fab_region_unmap(region, p);
        fab_region_release(region);
    }
    return 0;
}

int crew_fabric_loop(fab_client_t *client, const fab_handle_t *handle, int count)
{
    return import_loop(client, handle, count);
}

/* Wall seconds for `procs` importer processes doing `each` rounds at once;
 * each connects first, then they start together on a pipe, so that the time
 * is the imports' alone. Each runs on cpu (< 0: anywhere). */
static double bench_importers(const fab_handle_t *handle, int procs, int each, int cpu)
{
    int go[2], ready[2], done[2];
    if (pipe(go) != 0 || pipe(ready) != 0 || pipe(done) != 0)
        return -1;
    pid_t *pids = calloc((size_t)procs, sizeof(*pids));
    for (int i = 0; i < procs; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            close(go[1]);
            close(ready[0]);
            pin(0, cpu);
            fab_client_t *client;
            char byte = 'r';
            if (fab_client_connect(NULL, &client) != FAB_SUCCESS ||
                write(ready[1], &byte, 1) != 1 || read(go[0], &byte, 1) != 0)
                _exit(2);
            int rc = import_loop(client, handle, each);
            if (write(done[1], &byte, 1) != 1)
                _exit(2);
            fab_client_close(client);
            _exit(rc == 0 ? 0 : 1);
        }
    }
    close(go[0]);
    close(ready[1]);
    for (int i = 0; i < procs; i++) {
        char byte;
        if (read(ready[0], &byte, 1) != 1)
            break;
    }
    close(ready[0]);
    double t0 = now_s();
    close(go[1]); /* EOF: go */
    close(done[1]);
    for (int i = 0; i < procs; i++) {
        char byte;
        if (read(done[0], &byte, 1) != 1)
            break;
    }
    double t = now_s() - t0;
    close(done[0]);
    int ok = 1;
    for (int i = 0; i < procs; i++) {
        int status;
        waitpid(pids[i], &status, 0);
        ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    free(pids);
    return ok ? t : -1;
}

static void rss_per_allocation(fab_client_t *client, long count)
{
    fab_daemon_stats_t before, after;
    fab_region_t **regions = malloc((size_t)count * sizeof(*regions));
    if (regions == NULL || fab_client_stats(client, &before) != FAB_SUCCESS)
        return;
    fab_alloc_props_t props = fab_alloc_props_read_write(0, 4096);
    double t0 = now_s();
    long made = 0;
    for (; made < count; made++) {
        fab_status_t s = fab_client_allocate(client, &props, &regions[made]);
        if (s != FAB_SUCCESS) {
            fprintf(stderr, "  allocation %ld: %s\n", made, fab_status_name(s));
            break;
        }
    }
    double t = now_s() - t0;
    if (fab_client_stats(client, &after) == FAB_SUCCESS && made > 0)
        printf("  %8ld live allocations: daemon RSS %6.1f MiB -> %7.1f MiB, %6.1f bytes each "
               "(%.1f s to create)\n",
               made, before.rss / 1048576.0, after.rss / 1048576.0,
               (double)(after.rss - before.rss) / (double)made, t);
    for (long i = 0; i < made; i++)
        fab_region_release(regions[i]);
    free(regions);
}

int main(int argc, char **argv)
{
    int quick = 0, rss = 1, only = -1, importers = 1, crew_only = -1, crew_rounds = 20;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--smoke") == 0)
            quick = 2, rss = 0;
        else if (strcmp(argv[i], "--no-rss") == 0)
            rss = 0;
        else if (strcmp(argv[i], "--imports") == 0 && i + 1 < argc)
            only = atoi(argv[++i]);
        else if (strcmp(argv[i], "--importers") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0)
            importers = atoi(argv[++i]);
        else if (strcmp(argv[i], "--crew") == 0 && i + 1 < argc &&
                 (strcmp(argv[i + 1], "bare") == 0 || strcmp(argv[i + 1], "fabric") == 0 ||
                  strcmp(argv[i + 1], "minimal") == 0))
            i++, rss = 0, crew_only = argv[i][0] == 'b' ? CREW_BARE : argv[i][0] == 'f' ? CREW_FABRIC
                                                                                        : CREW_MINIMAL;
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0)
            crew_rounds = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--quick | --smoke] [--no-rss] [--imports N [--importers P]]\n"
                            "       %s --crew bare|fabric|minimal [--rounds R]\n",
                    argv[0], argv[0]);
            return 2;
        }
    }
    const char *exe = getenv("FABMEM_DAEMON");
    if (exe == NULL)
        exe = FABMEM_DAEMON_PATH;
    snprintf(dir, sizeof(dir), "/tmp/bench_fabric.XXXXXX");
    if (mkdtemp(dir) == NULL)
        return 1;
    snprintf(sock_path, sizeof(sock_path), "%s/fabmemd.sock", dir);
    char config[300];
    snprintf(config, sizeof(config), "%s/bench.ini", dir);
    FILE *f = fopen(config, "w");
    /* One user holds every allocation: no per-uid limits. */
    fprintf(f, "[daemon]\nmax_allocations_per_uid = 0\nmax_connections_per_uid = 0\n"
               "[node bench]\ngpus = 8\ngpu_memory = 64T\ngranularity = 4K\n"
               "[channel 0]\nuids = %lu\n", (unsigned long)getuid());
    fclose(f);

    /* A million memfds in the daemon and a million fds here. */
    rlim_t most = 1048576; /* the kernel's fs.nr_open caps any limit */
    FILE *nr = fopen("/proc/sys/fs/nr_open", "r");
    unsigned long long v;
    if (nr != NULL && fscanf(nr, "%llu", &v) == 1)
        most = (rlim_t)v;
    if (nr != NULL)
        fclose(nr);
    struct rlimit rl = {most, most};
    long small = 100000, large = quick ? 200000 : 1000000;
    if (rss && (most < 1000100 || setrlimit(RLIMIT_NOFILE, &rl) != 0)) {
        /* Without CAP_SYS_RESOURCE the hard limit stays: measure what fits. */
        getrlimit(RLIMIT_NOFILE, &rl);
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        fprintf(stderr, "cannot raise RLIMIT_NOFILE above a million (%s); the hard limit is %llu, "
                "so the memory figures use fewer allocations\n", strerror(errno),
                (unsigned long long)rl.rlim_max);
        large = (long)rl.rlim_max - 200;
        small = large / 2;
    }
    pid_t daemon = daemon_start(exe, sock_path, config);
    if (daemon < 0)
        return 1;
    setenv("FABMEM_SOCKET", sock_path, 1);
    setenv("FABMEM_NO_AUTOSTART", "1", 1);

    fab_client_t *client;
    if (fab_client_connect(NULL, &client) != FAB_SUCCESS)
        return 1;
    fab_alloc_props_t props = fab_alloc_props_read_write(0, SIZE);
    fab_region_t *region;
    fab_handle_t handle;
    if (fab_client_allocate(client, &props, &region) != FAB_SUCCESS ||
        fab_region_export(region, &handle) != FAB_SUCCESS)
        return 1;

    if (only >= 0) {
        /* N imports from each importer and nothing else: for counting the
         * daemon's instructions (FABMEM_DAEMON running it under callgrind). */
        double t = bench_importers(&handle, importers, only, -1);
        printf("bench_fabric: %d imports in %.3f s\n", only * importers, t);
        rss = 0;
        goto done;
    }
    if (crew_only >= 0) {
        /* One crew's 64-worker rounds alone, on two cores as above (one
         * core on a machine of one), for a profiler to watch. */
        int cpu = sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? -1 : 0;
        pin(daemon, cpu < 0 ? 1 : cpu);
        struct crew crew;
        if (crew_start(&crew, (enum crew_kind)crew_only, &handle, cpu) != 0) {
            fprintf(stderr, "bench_fabric: could not start the workers\n");
            return 1;
        }
        pid_t server = crew_only == CREW_BARE ? crew.server : daemon;
        uint64_t s0, w0, s1, w1;
        crew_cpu(&crew, server, &s0, &w0);
        double t0 = now_s();
        for (int r = 0; r < crew_rounds; r++)
            checked(crew_round(&crew, CREW, 200));
        double t = now_s() - t0, imports = (double)crew_rounds * CREW * 200;
        crew_cpu(&crew, server, &s1, &w1);
        crew_stop(&crew);
        printf("bench_fabric: %s crew, %d workers on %s: %.0f imports/s; cpu/import server %.2fus, "
               "workers %.2fus\n", crew_only == CREW_BARE ? "bare" : crew_only == CREW_FABRIC
                                    ? "fabric" : "minimal", CREW, cpu < 0 ? "two cores" : "one core",
               imports / t, (double)(s1 - s0) / imports / 1e3, (double)(w1 - w0) / imports / 1e3);
        rss = 0;
        goto done;
    }
    int n = quick == 2 ? 9 * 2 * 64 : quick ? 20000 : 200000;
    enum { ROUNDS = 9 };
    int per = n / ROUNDS;
    printf("bench_fabric: %d rounds of %d, bare and fabric alternating, 2 MiB allocation\n",
           ROUNDS, per);
    printf("  bare:   request + SCM_RIGHTS fd + mmap + munmap + close\n");
    printf("  fabric: import + map + unmap + release, from a second process\n");
    printf("  %-16s %-8s %9s %9s %9s\n", "client/server", "", "min", "median", "max");
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    static const struct { const char *name; int client, server; } placements[] = {
        {"same core", 0, 0},
        {"two cores", 0, 1},
    };
    double per_import[2][6]; /* bare syscalls, switches; fabric client, daemon syscalls, switches; ok */
    memset(per_import, 0, sizeof(per_import));
    for (int k = 0; k < 2; k++) {
        int client_cpu = placements[k].client, server_cpu = placements[k].server;
        if (server_cpu >= ncpu)
            continue;
        pin(daemon, server_cpu);
        bench_bare(per / 10 + 1, client_cpu, server_cpu); /* warm both */
        bench_importers(&handle, 1, per / 10 + 1, client_cpu);
        double bare[ROUNDS], fabric[ROUNDS], ratio[ROUNDS];
        for (int r = 0; r < ROUNDS; r++) {
            bare[r] = checked(bench_bare(per, client_cpu, server_cpu));
            fabric[r] = checked(bench_importers(&handle, 1, per, client_cpu)) * 1e9 / per;
            ratio[r] = fabric[r] / bare[r];
        }
        qsort(bare, ROUNDS, sizeof(double), cmp_double);
        qsort(fabric, ROUNDS, sizeof(double), cmp_double);
        qsort(ratio, ROUNDS, sizeof(double), cmp_double);
        printf("  %-16s %-8s %7.2fus %7.2fus %7.2fus\n", placements[k].name, "bare", bare[0] / 1000,
               bare[ROUNDS / 2] / 1000, bare[ROUNDS - 1] / 1000);
        printf("  %-16s %-8s %7.2fus %7.2fus %7.2fus\n", "", "fabric", fabric[0] / 1000,
               fabric[ROUNDS / 2] / 1000, fabric[ROUNDS - 1] / 1000);
        printf("  %-16s %-8s %8.2fx %8.2fx %8.2fx\n", "", "ratio", ratio[0], ratio[ROUNDS / 2],
               ratio[ROUNDS - 1]);

        /* Counted apart from the timed rounds, over the same loops. The
         * counters follow this process and its children (the bare server,
         * the importer) and, for the fabric, the daemon. */
        int m = per;
        double *c = per_import[k];
        int mine = syscall_counter(0, 1);
        double s0 = counter_value(mine), w0 = own_switches();
        bench_bare(m, client_cpu, server_cpu);
        double s1 = counter_value(mine), w1 = own_switches();
        int theirs = syscall_counter(daemon, 0);
        double d1 = counter_value(theirs), dw1 = proc_switches(daemon);
        bench_importers(&handle, 1, m, client_cpu);
        double s2 = counter_value(mine), w2 = own_switches();
        double d2 = counter_value(theirs), dw2 = proc_switches(daemon);
        c[0] = mine >= 0 ? (s1 - s0) / m : -1;
        c[1] = (w1 - w0) / m;
        c[2] = mine >= 0 ? (s2 - s1) / m : -1;
        c[3] = theirs >= 0 ? (d2 - d1) / m : -1;
        c[4] = (w2 - w1 + dw2 - dw1) / m;
        c[5] = 1;
        if (mine >= 0)
            close(mine);
        if (theirs >= 0)
            close(theirs);
    }
    printf("  per import, client and server together (system calls: perf raw_syscalls:sys_enter)\n");
    for (int k = 0; k < 2; k++) {
        double *c = per_import[k];
        if (!c[5])
            continue;
        if (c[0] < 0 || c[3] < 0)
            printf("  %-16s bare: %4.1f switches; fabric: %4.1f switches (system calls: no perf)\n",
                   placements[k].name, c[1], c[4]);
        else
            printf("  %-16s bare: %4.1f syscalls %4.1f switches; fabric: %4.1f syscalls "
                   "(client %.1f, daemon %.1f) %4.1f switches\n",
                   placements[k].name, c[0], c[1], c[2] + c[3], c[2], c[3], c[4]);
    }

    /* 64 importers next to one, like with like: long-lived workers, the
     * same pinning, the same imports per round, alternating; and the bare
     * mechanism's own 64 next to 1 in the same rounds. The minimal client's
     * crew (minimal_loop) takes its turn too: fabmemd with no client library
     * in front of it. */
    static const struct { const char *name; int cpu; } layouts[] = {
        {"one core", 0},
        {"two cores", -1},
    };
    static const char *kinds[] = {"bare", "fabric", "minimal"};
    int each = per / CREW;
    printf("  imports/s (import + map + unmap + release), %d workers next to 1, %d imports a "
           "round; minimal: fabmemd through the wire protocol alone, no client library\n", CREW,
           CREW * each);
    for (int k = 0; k < 2; k++) {
        int cpu = layouts[k].cpu;
        if (cpu < 0 && ncpu < 2)
            continue;
        pin(daemon, cpu < 0 ? 1 : cpu);
        struct crew crews[3];
        int started = 0;
        for (; started < 3; started++) {
            if (crew_start(&crews[started], (enum crew_kind)started, &handle, cpu) != 0)
                break;
        }
        if (started < 3) {
            fprintf(stderr, "bench_fabric: could not start the workers\n");
            failed = 1;
            break;
        }
        static const char *ratios[] = {"bare 64/1", "fabric 64/1", "minimal 64/1", "fabric/bare",
                                       "minimal/bare", "cpu bare/fab", "cpu bare/min"};
        enum { NRATIOS = sizeof(ratios) / sizeof(ratios[0]) };
        double rate[3][2][ROUNDS], ratio[NRATIOS][ROUNDS];
        /* CPU time of the 64-worker rounds, server and workers apart, and the
         * server's system calls. */
        uint64_t cpu_ns[3][2] = {{0, 0}, {0, 0}, {0, 0}}; /* [kind][server, workers] */
        double round_cpu[3][ROUNDS]; /* [kind][round]: server + workers, the 64's round */
        double calls[3] = {0, 0, 0};
        int counters[3] = {syscall_counter(crews[0].server, 0), syscall_counter(daemon, 0), -1};
        for (int r = 0; r < ROUNDS; r++) {
            for (int c = 0; c < 3; c++) {
                pid_t server = c == CREW_BARE ? crews[c].server : daemon;
                int counter = counters[c == CREW_BARE ? 0 : 1];
                uint64_t s0, w0, s1, w1;
                rate[c][0][r] = checked(crew_round(&crews[c], 1, CREW * each));
                crew_cpu(&crews[c], server, &s0, &w0);
                double c0 = counter_value(counter);
                rate[c][1][r] = checked(crew_round(&crews[c], CREW, each));
                crew_cpu(&crews[c], server, &s1, &w1);
                cpu_ns[c][0] += s1 - s0;
                cpu_ns[c][1] += w1 - w0;
                round_cpu[c][r] = (double)(s1 - s0) + (double)(w1 - w0);
                calls[c] += counter_value(counter) - c0;
            }
            for (int c = 0; c < 3; c++)
                ratio[c][r] = rate[c][1][r] / rate[c][0][r];
            ratio[3][r] = ratio[1][r] / ratio[0][r];
            ratio[4][r] = ratio[2][r] / ratio[0][r];
            /* The CPU an import of the 64 costs, bare's over the other's: the
             * same sense as the rates' (under 1: dearer than bare), and
             * steadier, since a round's idle time does not enter it. */
            ratio[5][r] = round_cpu[0][r] / round_cpu[1][r];
            ratio[6][r] = round_cpu[0][r] / round_cpu[2][r];
        }
        for (int c = 0; c < 3; c++)
            crew_stop(&crews[c]);
        for (int c = 0; c < 3; c++) {
            for (int i = 0; i < 2; i++) {
                char row[32];
                snprintf(row, sizeof(row), "%s %d", kinds[c], i == 0 ? 1 : CREW);
                qsort(rate[c][i], ROUNDS, sizeof(double), cmp_double);
                printf("  %-16s %-11s %9.0f %9.0f %9.0f\n", c + i == 0 ? layouts[k].name : "", row,
                       rate[c][i][0], rate[c][i][ROUNDS / 2], rate[c][i][ROUNDS - 1]);
            }
        }
        for (int i = 0; i < NRATIOS; i++) {
            qsort(ratio[i], ROUNDS, sizeof(double), cmp_double);
            printf("  %-16s %-12s %7.2fx %8.2fx %8.2fx\n", "", ratios[i], ratio[i][0],
                   ratio[i][ROUNDS / 2], ratio[i][ROUNDS - 1]);
        }
        /* Where a 64-worker import's CPU time goes (the server is one
         * process: its time an import bounds the crew's rate). */
        double imports = (double)ROUNDS * CREW * each;
        printf("  %-16s cpu/import  server / workers: bare %.2f / %.2fus; fabric %.2f / %.2fus; "
               "minimal %.2f / %.2fus\n", "", cpu_ns[0][0] / imports / 1e3,
               cpu_ns[0][1] / imports / 1e3, cpu_ns[1][0] / imports / 1e3,
               cpu_ns[1][1] / imports / 1e3, cpu_ns[2][0] / imports / 1e3,
               cpu_ns[2][1] / imports / 1e3);
        if (counters[0] >= 0 && counters[1] >= 0)
            printf("  %-16s syscalls/import  bare server %.2f; fabmemd %.2f (fabric), %.2f "
                   "(minimal)\n", "", calls[0] / imports, calls[1] / imports, calls[2] / imports);
        for (int i = 0; i < 2; i++) {
            if (counters[i] >= 0)
                close(counters[i]);
        }
    }

    /* fab_client_import_many of 16 handles next to 16 fab_client_import
     * calls, one importer, import and release only, alternating. */
    printf("  imports/s, one importer, %d handles at a time, import + release (%d a round)\n",
           BATCH, per / BATCH * BATCH);
    for (int k = 0; k < 2; k++) {
        int cpu = layouts[k].cpu;
        if (cpu < 0 && ncpu < 2)
            continue;
        pin(daemon, k == 0 ? 0 : 1);
        int client_cpu = 0;
        double single[ROUNDS], many[ROUNDS], ratio[ROUNDS];
        int total = per / BATCH * BATCH;
        batch_n = BATCH;
        for (int r = 0; r < ROUNDS; r++) {
            batch_many = 0;
            single[r] = total / checked(bench_importers(&handle, 1, total, client_cpu));
            batch_many = 1;
            many[r] = total / checked(bench_importers(&handle, 1, total, client_cpu));
            ratio[r] = many[r] / single[r];
        }
        batch_n = 0;
        qsort(single, ROUNDS, sizeof(double), cmp_double);
        qsort(many, ROUNDS, sizeof(double), cmp_double);
        qsort(ratio, ROUNDS, sizeof(double), cmp_double);
        printf("  %-16s %-8s %9.0f %9.0f %9.0f\n", k == 0 ? "same core" : "two cores", "single",
               single[0], single[ROUNDS / 2], single[ROUNDS - 1]);
        printf("  %-16s %-8s %9.0f %9.0f %9.0f\n", "", "many", many[0], many[ROUNDS / 2],
               many[ROUNDS - 1]);
        printf("  %-16s %-8s %8.2fx %8.2fx %8.2fx\n", "", "ratio", ratio[0], ratio[ROUNDS / 2],
               ratio[ROUNDS - 1]);
    }
    pin(daemon, -1);
    if (rss) {
        rss_per_allocation(client, small);
        rss_per_allocation(client, large);
    }
done:
    fab_region_release(region);
    fab_client_close(client);
    daemon_stop(daemon);
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    return system(cmd) == 0 && !failed ? 0 : 1;
}
