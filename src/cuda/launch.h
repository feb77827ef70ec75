/* Launches (launch.c): a checked launch, ready to run, and the one function
 * that runs it. Today every stream runs its work at the call, so
 * cuLaunchKernel runs a launch at once; a stream queue can hold a
 * fab__cu_launch_t and call fab__cu_launch_run when its turn comes. */
#ifndef FAB_CUDA_LAUNCH_H
#define FAB_CUDA_LAUNCH_H

#include "fabmem/kernel.h"
#include "src/cuda/cuda_abi.h"

typedef struct fab__cu_launch {
    fab_launch_t info;  /* what the implementation is given */
    fab_kernel_fn fn;   /* the implementation */
} fab__cu_launch_t;

/* Run a launch: call its implementation with the whole grid. The caller
 * holds no lock (the kernel may call the driver). info.params and
 * info.extra point at the caller's arrays: a queue that defers the run must
 * copy them first, as the driver copies arguments at the launch. */
CUresult fab__cu_launch_run(const fab__cu_launch_t *launch);

#endif /* FAB_CUDA_LAUNCH_H */
