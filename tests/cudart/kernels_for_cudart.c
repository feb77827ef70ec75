/* CPU implementations of the kernels that the nvcc-built runtime tests
 * launch with <<<>>> (test_cudart_nvcc.c has their CUDA source): a plugin
 * that FABMEM_KERNELS names (include/fabmem/kernel.h has the contract). */
#include <stddef.h>

#include "fabmem/kernel.h"

#define KERNEL __attribute__((visibility("default"))) void

void fab_kernel__Z5scalePiPKii(const fab_launch_t *launch);
void fab_kernel__Z3addPiii(const fab_launch_t *launch);
void fab_kernel__Z10hidden_setPii(const fab_launch_t *launch);
void fab_kernel__Z7rdc_addPii(const fab_launch_t *launch);

/* scale(int *p, const int *factor, int n): p[i] *= *factor for every thread
 * i of the grid below n (a 1-D launch). factor is a __device__ variable's
 * address, which is memory in this process. */
KERNEL fab_kernel__Z5scalePiPKii(const fab_launch_t *launch)
{
    int *p = *(int **)launch->params[0];
    const int *factor = *(const int *const *)launch->params[1];
    int n = *(const int *)launch->params[2];
    size_t threads = (size_t)launch->grid.x * launch->block.x;
    for (size_t i = 0; i < threads && i < (size_t)n; i++)
        p[i] *= *factor;
}

/* add(int *p, int v, int n): p[i] += v for every thread i of the grid below
 * n (a 1-D launch). */
KERNEL fab_kernel__Z3addPiii(const fab_launch_t *launch)
{
    int *p = *(int **)launch->params[0];
    int v = *(const int *)launch->params[1];
    int n = *(const int *)launch->params[2];
    size_t threads = (size_t)launch->grid.x * launch->block.x;
    for (size_t i = 0; i < threads && i < (size_t)n; i++)
        p[i] += v;
}

/* hidden_set(int *p, int v), a static kernel: p[0] = v. */
KERNEL fab_kernel__Z10hidden_setPii(const fab_launch_t *launch)
{
    int *p = *(int **)launch->params[0];
    *p = *(const int *)launch->params[1];
}

/* rdc_add(int *p, int v) of the -rdc=true build: p[0] += twice(v). */
KERNEL fab_kernel__Z7rdc_addPii(const fab_launch_t *launch)
{
    int *p = *(int **)launch->params[0];
    *p += 2 * *(const int *)launch->params[1];
}
