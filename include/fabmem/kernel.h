/* The contract between libcuda's launches and a kernel's CPU implementation.
 *
 * fabmem runs no GPU code: a kernel launched with cuLaunchKernel (or
 * cuLaunchKernelEx, cuLaunchCooperativeKernel) runs a C function that the
 * user supplies in a shared library named by FABMEM_KERNELS (several may be
 * given, separated by ':'; each is loaded once, with dlopen RTLD_NOW |
 * RTLD_LOCAL, at the first module load or launch). A kernel whose (mangled)
 * name is K is implemented by the exported function
 *
 *     void fab_kernel_K(const fab_launch_t *launch);
 *
 * which is called once per launch with the whole grid: it loops over the
 * blocks and threads itself. Device pointers are host addresses in this
 * process, so the function reads and writes them directly. It may call the
 * driver API (cuMemcpy and the like) but must not launch from inside a
 * launch on the same stream. docs/cuda.md, "Code objects and kernels", has a
 * complete example. */
#ifndef FABMEM_KERNEL_H
#define FABMEM_KERNEL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fab_dim3 {
    unsigned x, y, z;
} fab_dim3_t;

typedef struct fab_launch {
    const char *name;     /* the kernel's mangled name, as in its image */
    fab_dim3_t grid;      /* blocks in the grid */
    fab_dim3_t block;     /* threads in a block */
    size_t shared_bytes;  /* the dynamic shared memory asked for, per block */
    void *stream;         /* the CUstream of the launch, opaque */
    void **params;        /* kernelParams as given: params[i] points at argument i */
    void **extra;         /* the launch's extra array as given, or NULL */
    /* With extra's CU_LAUNCH_PARAM_BUFFER_POINTER / _SIZE, the packed
     * argument buffer and its size (else NULL and 0). */
    const void *arg_buffer;
    size_t arg_buffer_size;
    int cooperative;      /* a cooperative launch (grid-wide sync is implied: one call) */
    int device;           /* the device ordinal of the launch's context */
} fab_launch_t;

/* The type of a kernel's implementation, for dlsym users. */
typedef void (*fab_kernel_fn)(const fab_launch_t *launch);

#ifdef __cplusplus
}
#endif

#endif /* FABMEM_KERNEL_H */
