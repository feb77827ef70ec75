/* What the benchmarks written against cuda.h share: CHECK, which ends the
 * program at the first driver call that fails, naming it, and the clock
 * they time with. One header for programs of their own, as bench_common.h
 * is. */
#ifndef FAB_BENCH_CUDA_H
#define FAB_BENCH_CUDA_H

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
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

#endif /* FAB_BENCH_CUDA_H */
