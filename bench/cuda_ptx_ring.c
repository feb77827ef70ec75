/* A two-process flag ring, as NCCL's LL protocol moves data: a producer
 * kernel in one process stores 8-byte slots {data, flag} into shared memory
 * and a consumer kernel in another spins on each slot's flag, checks its
 * data, and acknowledges each round; run by the PTX engine, next to the same
 * ring in native C (one thread a side, C11 atomics) in the same run,
 * interleaved, pinned to one core and to two.
 *
 * Prints, per placement, the data bandwidth (4 of every 8 bytes stored are
 * data) of each side, min / median / max over the runs, and the ratio of
 * their times (engine / native). Written against cuda.h only.
 *
 * Usage: cuda_ptx_ring [slots, default 16384] [rounds per run, default 20]
 *                      [runs, default 5]     (--smoke: 1024 4 1)
 * The consumer is this program run again: cuda_ptx_ring --consumer MODE FD
 * SLOTS ROUNDS CPU READY DONE. */
#include <cuda.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_cuda.h"

/* Slots at 0; the consumer's ack at ACK; its count of wrong slots at ERRS. */
#define ACK_OFF(slots) ((size_t)(slots) * 8)
#define ERRS_OFF(slots) ((size_t)(slots) * 8 + 64)

static const char ring_ptx[] =
    ".version 8.0\n.target sm_80\n.address_size 64\n"
    ".visible .entry producer(.param .u64 base, .param .u32 slots, .param .u32 rounds)\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<10>;\n"
    "  .reg .b64 %rd<6>;\n"
    "  ld.param.u64 %rd1, [base];\n"
    "  ld.param.u32 %r1, [slots];\n"
    "  ld.param.u32 %r2, [rounds];\n"
    "  mov.u32 %r3, %tid.x;\n"
    "  mov.u32 %r9, %ntid.x;\n"
    "  mul.wide.u32 %rd2, %r1, 8;\n"
    "  add.s64 %rd2, %rd1, %rd2;\n"
    "  setp.ne.u32 %p3, %r3, 0;\n"
    "  mov.u32 %r4, 1;\n"
    "ROUND:\n"
    "  setp.gt.u32 %p1, %r4, %r2;\n"
    "  @%p1 bra DONE;\n"
    "  @%p3 bra GO;\n"
    "  sub.u32 %r5, %r4, 1;\n"
    "WAIT:\n"
    "  ld.acquire.sys.global.u32 %r6, [%rd2];\n"
    "  setp.ne.u32 %p1, %r6, %r5;\n"
    "  @%p1 bra WAIT;\n"
    "GO:\n"
    "  bar.sync 0;\n"
    "  mov.u32 %r7, %r3;\n"
    "FILL:\n"
    "  setp.ge.u32 %p2, %r7, %r1;\n"
    "  @%p2 bra FILLED;\n"
    "  xor.b32 %r8, %r7, %r4;\n"
    "  mul.wide.u32 %rd3, %r7, 8;\n"
    "  add.s64 %rd4, %rd1, %rd3;\n"
    "  st.volatile.global.v2.u32 [%rd4], {%r8, %r4};\n"
    "  add.u32 %r7, %r7, %r9;\n"
    "  bra FILL;\n"
    "FILLED:\n"
    "  add.u32 %r4, %r4, 1;\n"
    "  bra ROUND;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n"
    ".visible .entry consumer(.param .u64 base, .param .u32 slots, .param .u32 rounds)\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<14>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  ld.param.u64 %rd1, [base];\n"
    "  ld.param.u32 %r1, [slots];\n"
    "  ld.param.u32 %r2, [rounds];\n"
    "  mov.u32 %r3, %tid.x;\n"
    "  mov.u32 %r9, %ntid.x;\n"
    "  mul.wide.u32 %rd2, %r1, 8;\n"
    "  add.s64 %rd2, %rd1, %rd2;\n"
    "  add.s64 %rd5, %rd2, 64;\n"
    "  setp.ne.u32 %p3, %r3, 0;\n"
    "  mov.u32 %r4, 1;\n"
    "  mov.u32 %r12, 0;\n"
    "ROUND:\n"
    "  setp.gt.u32 %p1, %r4, %r2;\n"
    "  @%p1 bra DONE;\n"
    "  mov.u32 %r7, %r3;\n"
    "SLOT:\n"
    "  setp.ge.u32 %p2, %r7, %r1;\n"
    "  @%p2 bra SEEN;\n"
    "  mul.wide.u32 %rd3, %r7, 8;\n"
    "  add.s64 %rd4, %rd1, %rd3;\n"
    "SPIN:\n"
    "  ld.volatile.global.v2.u32 {%r10, %r11}, [%rd4];\n"
    "  setp.ne.u32 %p1, %r11, %r4;\n"
    "  @%p1 bra SPIN;\n"
    "  xor.b32 %r8, %r7, %r4;\n"
    "  setp.ne.u32 %p1, %r10, %r8;\n"
    "  selp.u32 %r13, 1, 0, %p1;\n"
    "  add.u32 %r12, %r12, %r13;\n"
    "  add.u32 %r7, %r7, %r9;\n"
    "  bra SLOT;\n"
    "SEEN:\n"
    "  bar.sync 0;\n"
    "  @%p3 bra NEXT;\n"
    "  st.release.sys.global.u32 [%rd2], %r4;\n"
    "NEXT:\n"
    "  add.u32 %r4, %r4, 1;\n"
    "  bra ROUND;\n"
    "DONE:\n"
    "  atom.global.add.u32 %r5, [%rd5], %r12;\n"
    "  ret;\n"
    "}\n";

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    (void)sched_setaffinity(0, sizeof(set), &set);
}

static CUdeviceptr map_fd(int fd, size_t size, CUmemGenericAllocationHandle *h)
{
    CHECK(cuMemImportFromShareableHandle(h, (void *)(uintptr_t)fd,
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    CUdeviceptr p;
    CHECK(cuMemAddressReserve(&p, size, 0, 0, 0));
    CHECK(cuMemMap(p, size, 0, *h, 0));
    CUmemAccessDesc d = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CHECK(cuMemSetAccess(p, size, &d, 1));
    return p;
}

/* The native ring: the same slots and acks, one thread a side. */
static void native_producer(volatile uint64_t *slots, _Atomic uint32_t *ack, unsigned n,
                            unsigned rounds)
{
    for (unsigned r = 1; r <= rounds; r++) {
        while (atomic_load_explicit(ack, memory_order_acquire) != r - 1)
            sched_yield(); /* as a spinning warp yields */
        for (unsigned i = 0; i < n; i++)
            atomic_store_explicit((_Atomic uint64_t *)&slots[i], (uint64_t)r << 32 | (i ^ r),
                                  memory_order_relaxed);
    }
}

static unsigned native_consumer(volatile uint64_t *slots, _Atomic uint32_t *ack, unsigned n,
                                unsigned rounds)
{
    unsigned errs = 0;
    for (unsigned r = 1; r <= rounds; r++) {
        for (unsigned i = 0; i < n; i++) {
            uint64_t v;
            while (((v = atomic_load_explicit((_Atomic uint64_t *)&slots[i],
                                              memory_order_relaxed)) >> 32) != r)
                sched_yield();
            errs += (uint32_t)v != (i ^ r);
        }
        atomic_store_explicit(ack, r, memory_order_release);
    }
    return errs;
}

static size_t ring_size(unsigned slots, size_t g)
{
    size_t need = ERRS_OFF(slots) + 64;
    return (need + g - 1) / g * g;
}

static int consumer_main(char **argv)
{
    int native = strcmp(argv[2], "native") == 0;
    int fd = atoi(argv[3]);
    unsigned slots = (unsigned)atoi(argv[4]), rounds = (unsigned)atoi(argv[5]);
    pin(atoi(argv[6]));
    int ready = atoi(argv[7]), done = atoi(argv[8]);
    CUdevice dev;
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    size_t g;
    CUmemAllocationProp prop = device_prop(0, 0);
    CHECK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    size_t size = ring_size(slots, g);
    CUmemGenericAllocationHandle h;
    CUdeviceptr p = map_fd(fd, size, &h);
    CUmodule mod;
    CUfunction f;
    CHECK(cuModuleLoadData(&mod, ring_ptx));
    CHECK(cuModuleGetFunction(&f, mod, "consumer"));
    char c = 'r';
    if (write(ready, &c, 1) != 1)
        return 2;
    unsigned errs;
    if (native) {
        errs = native_consumer((volatile uint64_t *)(uintptr_t)p,
                               (_Atomic uint32_t *)(uintptr_t)(p + ACK_OFF(slots)), slots, rounds);
    } else {
        void *params[] = {&p, &slots, &rounds};
        CHECK(cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, NULL, params, NULL));
        CHECK(cuCtxSynchronize());
        CHECK(cuMemcpyDtoH(&errs, p + ERRS_OFF(slots), 4));
    }
    if (errs)
        fprintf(stderr, "consumer: %u slots held the wrong data\n", errs);
    c = errs == 0 ? 'd' : 'e';
    if (write(done, &c, 1) != 1)
        return 2;
    return errs == 0 ? 0 : 3;
}

/* One run of the ring; the seconds it took, from the first store to the
 * consumer's last check. */
static double one_run(const char *self, int native, CUmemGenericAllocationHandle h, CUdeviceptr p,
                      size_t size, CUfunction producer, unsigned slots, unsigned rounds,
                      int cpu_consumer)
{
    CHECK(cuMemsetD8(p, 0, size));
    int fd;
    CHECK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    int ready[2], done[2];
    if (pipe(ready) != 0 || pipe(done) != 0)
        exit(1);
    pid_t pid = fork();
    if (pid == 0) {
        fcntl(fd, F_SETFD, 0); /* the exported fd is close-on-exec */
        char a[7][24];
        snprintf(a[0], 24, "%d", fd);
        snprintf(a[1], 24, "%u", slots);
        snprintf(a[2], 24, "%u", rounds);
        snprintf(a[3], 24, "%d", cpu_consumer);
        snprintf(a[4], 24, "%d", ready[1]);
        snprintf(a[5], 24, "%d", done[1]);
        execl(self, self, "--consumer", native ? "native" : "engine", a[0], a[1], a[2], a[3],
              a[4], a[5], (char *)NULL);
        _exit(127);
    }
    close(fd);
    close(ready[1]);
    close(done[1]);
    char c;
    if (read(ready[0], &c, 1) != 1) {
        fprintf(stderr, "the consumer did not start\n");
        exit(1);
    }
    double t0 = now_ns() * 1e-9;
    if (native) {
        native_producer((volatile uint64_t *)(uintptr_t)p,
                        (_Atomic uint32_t *)(uintptr_t)(p + ACK_OFF(slots)), slots, rounds);
    } else {
        void *params[] = {&p, &slots, &rounds};
        CHECK(cuLaunchKernel(producer, 1, 1, 1, 128, 1, 1, 0, NULL, params, NULL));
    }
    if (read(done[0], &c, 1) != 1 || c != 'd') {
        fprintf(stderr, "the consumer saw wrong data or failed\n");
        exit(1);
    }
    double t1 = now_ns() * 1e-9;
    CHECK(cuCtxSynchronize());
    int status;
    waitpid(pid, &status, 0);
    close(ready[0]);
    close(done[0]);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "the consumer exited %d\n", status);
        exit(1);
    }
    return t1 - t0;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc >= 9 && strcmp(argv[1], "--consumer") == 0)
        return consumer_main(argv);
    unsigned slots = 16384, rounds = 20, runs = 5;
    if (argc > 1 && strcmp(argv[1], "--smoke") == 0) {
        slots = 1024;
        rounds = 4;
        runs = 1;
    } else {
        if (argc > 1)
            slots = (unsigned)atoi(argv[1]);
        if (argc > 2)
            rounds = (unsigned)atoi(argv[2]);
        if (argc > 3)
            runs = (unsigned)atoi(argv[3]);
    }
    if (slots == 0 || rounds == 0 || runs == 0 || runs > 64)
        return 2;
    CUdevice dev;
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CUmemAllocationProp prop = device_prop(0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    size_t g;
    CHECK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    size_t size = ring_size(slots, g);
    CUmemGenericAllocationHandle h;
    CHECK(cuMemCreate(&h, size, &prop, 0));
    CUdeviceptr p;
    CHECK(cuMemAddressReserve(&p, size, 0, 0, 0));
    CHECK(cuMemMap(p, size, 0, h, 0));
    CUmemAccessDesc d = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CHECK(cuMemSetAccess(p, size, &d, 1));
    CUmodule mod;
    CUfunction producer;
    CHECK(cuModuleLoadData(&mod, ring_ptx));
    CHECK(cuModuleGetFunction(&producer, mod, "producer"));
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    double bytes = (double)slots * 4 * rounds; /* data bytes moved a run */
    printf("cuda_ptx_ring: %u slots of 8 bytes, %u rounds a run, %u runs; data GB/s min / median / max\n",
           slots, rounds, runs);
    for (int placement = 0; placement < (ncpu > 1 ? 2 : 1); placement++) {
        int cpu_consumer = placement; /* producer on 0; consumer on 0, then 1 */
        pin(0);
        double eng[64], nat[64], ratio[64];
        for (unsigned i = 0; i < runs; i++) {
            double te = one_run(argv[0], 0, h, p, size, producer, slots, rounds, cpu_consumer);
            double tn = one_run(argv[0], 1, h, p, size, producer, slots, rounds, cpu_consumer);
            eng[i] = bytes / te / 1e9;
            nat[i] = bytes / tn / 1e9;
            ratio[i] = tn > 0 ? te / tn : 0;
        }
        qsort(eng, runs, sizeof(double), cmp);
        qsort(nat, runs, sizeof(double), cmp);
        qsort(ratio, runs, sizeof(double), cmp);
        printf("%s\n", placement ? "two cores" : "one core");
        printf("  engine   %8.3f %8.3f %8.3f GB/s\n", eng[0], eng[runs / 2], eng[runs - 1]);
        printf("  native   %8.3f %8.3f %8.3f GB/s\n", nat[0], nat[runs / 2], nat[runs - 1]);
        printf("  engine / native time      %8.2f %8.2f %8.2f x\n", ratio[0], ratio[runs / 2],
               ratio[runs - 1]);
    }
    CHECK(cuModuleUnload(mod));
    CHECK(cuMemUnmap(p, size));
    CHECK(cuMemRelease(h));
    CHECK(cuMemAddressFree(p, size));
    return 0;
}
