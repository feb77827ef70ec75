/* The VMM cycle through the driver API next to the bare system calls that
 * carry it, in the same run, and the ratio between them (the emulation aims
 * at 1.5x).
 *
 *   driver: cuMemCreate, cuMemAddressReserve, cuMemMap, cuMemSetAccess,
 *           cuMemUnmap, cuMemRelease, cuMemAddressFree
 *   bare:   memfd_create, ftruncate, mmap, mprotect, munmap, close
 *
 * Written against cuda.h only; run against the emulation it measures the
 * emulation's bookkeeping on top of the kernel's work. The two loops alternate
 * in rounds and each reports its median round, so that drift in the machine
 * affects both alike.
 *
 * Usage: cuda_vmm_cycle [cycles per round, default 2000] [rounds, default 9] */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define CHECK(call)                                                         \
    do {                                                                    \
        CUresult r_ = (call);                                               \
        if (r_ != CUDA_SUCCESS) {                                           \
            fprintf(stderr, "%s failed: %d\n", #call, (int)r_);             \
            exit(1);                                                        \
        }                                                                   \
    } while (0)

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

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

static double bare_round(int cycles, size_t size)
{
    double t0 = now_ns();
    for (int i = 0; i < cycles; i++) {
        int fd = memfd_create("bench", MFD_CLOEXEC);
        if (fd < 0 || ftruncate(fd, (off_t)size) != 0)
            exit(1);
        void *p = mmap(NULL, size, PROT_NONE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED || mprotect(p, size, PROT_READ | PROT_WRITE) != 0)
            exit(1);
        munmap(p, size);
        close(fd);
    }
    return (now_ns() - t0) / cycles;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int cycles = argc > 1 ? atoi(argv[1]) : 2000;
    int rounds = argc > 2 ? atoi(argv[2]) : 9;
    if (cycles <= 0 || rounds <= 0 || rounds > 99)
        return 2;
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CHECK(cuCtxSetCurrent(ctx));
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    size_t size;
    CHECK(cuMemGetAllocationGranularity(&size, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CUmemAccessDesc access;
    memset(&access, 0, sizeof(access));
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = 0;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;

    double drv[99], bare[99];
    driver_round(cycles / 10 + 1, size, &prop, &access); /* warm up both */
    bare_round(cycles / 10 + 1, size);
    for (int r = 0; r < rounds; r++) {
        drv[r] = driver_round(cycles, size, &prop, &access);
        bare[r] = bare_round(cycles, size);
    }
    qsort(drv, (size_t)rounds, sizeof(double), cmp_double);
    qsort(bare, (size_t)rounds, sizeof(double), cmp_double);
    double d = drv[rounds / 2], b = bare[rounds / 2];
    printf("VMM cycle, %zu bytes, %d cycles x %d rounds (median round)\n", size, cycles, rounds);
    printf("  driver API (7 calls): %9.0f ns/cycle\n", d);
    printf("  bare syscalls (6):    %9.0f ns/cycle\n", b);
    printf("  ratio:                %9.2fx\n", d / b);
    return 0;
}
