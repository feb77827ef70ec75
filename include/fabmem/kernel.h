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
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fab_dim3 {
    unsigned x, y, z;
} fab_dim3_t;

/* Multicast on the CPU (docs/cuda.md, "Multicast"). A store through a
 * multicast mapping lands in this process's staging copy and reaches every
 * bound buffer at the next synchronisation point: the end of the launch, a
 * cuStreamSynchronize, cuCtxSynchronize or cuEventSynchronize, or sync()
 * here. Reductions, which multimem instructions do on a GPU, read every
 * bound buffer. Each returns 0 (CUDA_SUCCESS) or a CUresult. */
typedef struct fab_multicast_ops {
    /* Publish this process's multicast stores now. */
    int (*sync)(void);
    /* out[i] = the sum over every buffer bound to the multicast object at
     * mc_addr + 4*i (a multicast mapping's address) of its element i:
     * multimem.ld_reduce.add on 32-bit floats / unsigned integers. */
    int (*reduce_add_f32)(const void *mc_addr, float *out, size_t count);
    int (*reduce_add_u32)(const void *mc_addr, uint32_t *out, size_t count);
} fab_multicast_ops_t;

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
    const fab_multicast_ops_t *multicast; /* multicast helpers, never NULL */
} fab_launch_t;

/* The type of a kernel's implementation, for dlsym users. */
typedef void (*fab_kernel_fn)(const fab_launch_t *launch);

#ifdef __cplusplus
}
#endif

#endif /* FABMEM_KERNEL_H */
