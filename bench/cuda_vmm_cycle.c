/* The VMM cycle through the driver API next to the bare system calls that
 * carry it, in the same run, and the ratio between them (the emulation aims
 * at 1.2x the reserved calls below).
 *
 *   driver: cuMemCreate, cuMemAddressReserve, cuMemMap, cuMemSetAccess,
 *           cuMemUnmap, cuMemRelease, cuMemAddressFree
 *   bare:   memfd_create, ftruncate, mmap, mprotect, munmap, close
 *   sealed: the same with the seals and the mode 0400 every memfd of the
 *           emulation carries (F_ADD_SEALS, fchmod): the kernel's share of
 *           the trust rules, so that its ratio is the bookkeeping alone
 *   reserved: the sealed calls with the mapping made into a reservation
 *           first (an anonymous PROT_NONE mmap, then mmap MAP_FIXED), as
 *           the driver's rules have it: the baseline the driver is held to.
 *           cuMemUnmap's one call more (the range goes back to PROT_NONE
 *           anonymous memory: it stays reserved) is the driver's own; its
 *           reserve and free make none once a freed range of the size is
 *           kept (src/cuda/vmm.c), so the cycle makes 8 calls to these 9
 *   re-reserved: the reserved calls with that one more (an anonymous
 *           PROT_NONE mmap MAP_FIXED over the mapping before the munmap):
 *           every call a cycle with no range kept makes, and its difference
 *           from reserved the kernel's price of keeping the range reserved
 *
 * The process is pinned to one core. Each round runs the three loops in turn;
 * the ratios are per round, printed as min / median / max.
 *
 * Written against cuda.h only; run against the emulation it measures the
 * emulation's bookkeeping on top of the kernel's work. The two loops alternate
 * in rounds and each reports its median round, so that drift in the machine
 * affects both alike.
 *
 * cuInit asks fabmemd for the topology; FABMEM_NO_AUTOSTART=1 with no daemon
 * running measures the same cycle without one (it needs none).
 *
 * After the timed rounds, each loop runs once more under counters: system
 * calls per cycle (perf's raw_syscalls:sys_enter tracepoint; it needs root
 * or perf_event_paranoid -1, else the line says so) and context switches
 * per cycle (getrusage), which do not depend on the machine's load.
 *
 * Usage: cuda_vmm_cycle [cycles per round, default 2000] [rounds, default 9] */
#include <cuda.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_cuda.h"
#include "syscall_counter.h"

static double driver_round(int cycles, size_t size, const CUmemAllocationProp *prop,
                           const CUmemAccessDesc *access)
{
    double t0 = now_ns();
    for (int i = 0; i < cycles; i++) {
        CUmemGenericAllocationHandle h;
        CUdeviceptr ptr;
        CHECK(cuMemCreate(&h, size, prop, 0));
        CHECK(cuMemAddressReserve(&ptr, size, 0, 0, 0));
        CHECK(cuMemMap(ptr, size, 0, h, 0));
        CHECK(cuMemSetAccess(ptr, size, access, 1));
        CHECK(cuMemUnmap(ptr, size));
        CHECK(cuMemRelease(h));
        CHECK(cuMemAddressFree(ptr, size));
    }
    return (now_ns() - t0) / cycles;
}

/* sealed: 1 the seals and mode, 2 those and a reservation first, 3 those
 * and the reservation put back before the munmap. */
static double bare_round(int cycles, size_t size, int sealed)
{
    double t0 = now_ns();
    for (int i = 0; i < cycles; i++) {
        int fd = memfd_create("bench", MFD_CLOEXEC | (sealed ? MFD_ALLOW_SEALING : 0));
        if (fd < 0 || ftruncate(fd, (off_t)size) != 0)
            exit(1);
        if (sealed && (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0 ||
                       fchmod(fd, 0400) != 0))
            exit(1);
        void *p = sealed < 2 ? NULL
                             : mmap(NULL, size, PROT_NONE,
                                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
            exit(1);
        p = mmap(p, size, PROT_NONE, MAP_SHARED | (p ? MAP_FIXED : 0), fd, 0);
        if (p == MAP_FAILED || mprotect(p, size, PROT_READ | PROT_WRITE) != 0)
            exit(1);
        if (sealed == 3 && mmap(p, size, PROT_NONE,
                                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
                                0) == MAP_FAILED)
            exit(1);
        munmap(p, size);
        close(fd);
    }
    return (now_ns() - t0) / cycles;
}

static double counted(int fd)
{
    uint64_t v;
    return fd >= 0 && read(fd, &v, sizeof(v)) == sizeof(v) ? (double)v : -1;
}

static double switches(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_nvcsw + ru.ru_nivcsw);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One line: min / median / max of n values (sorted in place). */
static void print_row(const char *what, double *v, int n, const char *unit)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    const char *fmt = unit[0] ? "  %-30s %8.2f%s %8.2f%s %8.2f%s\n" : "  %-30s %8.0f%s %8.0f%s %8.0f%s\n";
    printf(fmt, what, v[0], unit, v[n / 2], unit, v[n - 1], unit);
}

/* Pin to the core this process is on now, so that every round runs there. */
static void pin_here(void)
{
    int cpu = sched_getcpu();
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu < 0 ? 0 : cpu, &set);
    (void)sched_setaffinity(0, sizeof(set), &set);
}

int main(int argc, char **argv)
{
    int cycles = argc > 1 ? atoi(argv[1]) : 2000;
    int rounds = argc > 2 ? atoi(argv[2]) : 9;
    if (cycles <= 0 || rounds <= 0 || rounds > 99)
        return 2;
    pin_here();
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CHECK(cuCtxSetCurrent(ctx));
    CUmemAllocationProp prop = device_prop(0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    size_t size;
    CHECK(cuMemGetAllocationGranularity(&size, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CUmemAccessDesc access;
    memset(&access, 0, sizeof(access));
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = 0;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;

    double drv[99], bare[99], sealed[99], reserved[99], rereserved[99], ratio[99],
        ratio_sealed[99], ratio_reserved[99], ratio_rereserved[99], price[99];
    driver_round(cycles / 10 + 1, size, &prop, &access); /* warm up all three */
    bare_round(cycles / 10 + 1, size, 0);
    bare_round(cycles / 10 + 1, size, 1);
    bare_round(cycles / 10 + 1, size, 2);
    bare_round(cycles / 10 + 1, size, 3);
    for (int r = 0; r < rounds; r++) {
        drv[r] = driver_round(cycles, size, &prop, &access);
        bare[r] = bare_round(cycles, size, 0);
        sealed[r] = bare_round(cycles, size, 1);
        reserved[r] = bare_round(cycles, size, 2);
        rereserved[r] = bare_round(cycles, size, 3);
        price[r] = rereserved[r] - reserved[r];
        ratio_rereserved[r] = drv[r] / rereserved[r];
        ratio[r] = drv[r] / bare[r];
        ratio_sealed[r] = drv[r] / sealed[r];
        ratio_reserved[r] = drv[r] / reserved[r];
    }
    printf("VMM cycle, %zu bytes, %d cycles x %d rounds, one core; min / median / max\n", size,
           cycles, rounds);
    print_row("driver API (7 calls), ns", drv, rounds, "");
    print_row("bare syscalls (6), ns", bare, rounds, "");
    print_row("sealed syscalls (8), ns", sealed, rounds, "");
    print_row("reserved syscalls (9), ns", reserved, rounds, "");
    print_row("re-reserved syscalls (10), ns", rereserved, rounds, "");
    print_row("the re-reservation, ns", price, rounds, "");
    print_row("ratio to bare", ratio, rounds, "x");
    print_row("ratio to sealed", ratio_sealed, rounds, "x");
    print_row("ratio to reserved", ratio_reserved, rounds, "x");
    print_row("ratio to re-reserved", ratio_rereserved, rounds, "x");

    int fd = syscall_counter(0, 0);
    double s0 = counted(fd), w0 = switches();
    driver_round(cycles, size, &prop, &access);
    double s1 = counted(fd), w1 = switches();
    bare_round(cycles, size, 0);
    double s2 = counted(fd), w2 = switches();
    bare_round(cycles, size, 1);
    double s3 = counted(fd), w3 = switches();
    bare_round(cycles, size, 2);
    double s4 = counted(fd), w4 = switches();
    if (fd >= 0)
        printf("  per cycle: driver %.1f syscalls %.2f switches; bare %.1f, %.2f; sealed %.1f, %.2f; "
               "reserved %.1f, %.2f\n",
               (s1 - s0) / cycles, (w1 - w0) / cycles, (s2 - s1) / cycles, (w2 - w1) / cycles,
               (s3 - s2) / cycles, (w3 - w2) / cycles, (s4 - s3) / cycles, (w4 - w3) / cycles);
    else
        printf("  per cycle: driver %.2f switches; bare %.2f; sealed %.2f; reserved %.2f (system "
               "calls: no perf)\n",
               (w1 - w0) / cycles, (w2 - w1) / cycles, (w3 - w2) / cycles, (w4 - w3) / cycles);
    return 0;
}
