/* Launches (launch.c): a checked launch, ready to run, and the function that
 * runs a CPU implementation's. A launch of PTX goes through program.h
 * instead, which copies the arguments and queues the grid. */
#ifndef FAB_CUDA_LAUNCH_H
#define FAB_CUDA_LAUNCH_H

#include "fabmem/kernel.h"
#include "src/cuda/cuda_abi.h"
#include "src/ptx/ptx.h"

typedef struct fab__cu_launch {
    fab_launch_t info;  /* what the implementation is given */
    fab_kernel_fn fn;   /* the CPU implementation (a plugin's), or NULL */
    const fab__ptx_kernel_t *ptx; /* else the kernel's PTX, which the PTX engine runs */
    uint32_t cluster[3];          /* cuLaunchKernelEx's cluster dimensions, 0s for none */
} fab__cu_launch_t;

/* Run a launch: call its implementation with the whole grid. The caller
 * holds no lock (the kernel may call the driver). info.params and
 * info.extra point at the caller's arrays: a queue that defers the run must
 * copy them first, as the driver copies arguments at the launch. */
CUresult fab__cu_launch_run(const fab__cu_launch_t *launch);

#endif /* FAB_CUDA_LAUNCH_H */
