/* What the benchmarks written against cuda.h share: CHECK, which ends the
 * program at the first driver call that fails, naming it, the clock they
 * time with, and the properties of the device memory they allocate. One header for programs of their own, as bench_common.h
 * is. */
#ifndef FAB_BENCH_CUDA_H
#define FAB_BENCH_CUDA_H

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call)                                                         \
    do {                                                                    \
        CUresult r_ = (call);                                               \
        if (r_ != CUDA_SUCCESS) {                                           \
            fprintf(stderr, "%s failed: %d\n", #call, (int)r_);             \
            exit(1);                                                        \
        }                                                                   \
    } while (0)

/* CLOCK_MONOTONIC in nanoseconds. */
static inline double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Pinned memory of device dev, shareable as types (0: not at all). */
static inline CUmemAllocationProp device_prop(int dev, CUmemAllocationHandleType types)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    prop.requestedHandleTypes = types;
    return prop;
}

#endif /* FAB_BENCH_CUDA_H */
