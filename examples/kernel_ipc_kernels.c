/* The CPU implementation of kernel_ipc's one kernel, as a fabmem kernel
 * plugin: built as a shared library and named by FABMEM_KERNELS, it is what
 * runs when kernel_ipc launches "stamp". include/fabmem/kernel.h has the
 * contract.
 *
 *   .entry stamp(.param .u64 out, .param .u32 worker, .param .u32 count)
 *
 * Every thread i of the grid (i < count) writes worker * 1000000 + i to
 * out[worker * count + i]: each worker fills its own slice of the shared
 * buffer. */
#include <stdint.h>

#include "fabmem/kernel.h"

__attribute__((visibility("default"))) void fab_kernel_stamp(const fab_launch_t *launch);

void fab_kernel_stamp(const fab_launch_t *launch)
{
    uint32_t *out = *(uint32_t **)launch->params[0];
    uint32_t worker = *(const uint32_t *)launch->params[1];
    uint32_t count = *(const uint32_t *)launch->params[2];
    uint64_t threads = (uint64_t)launch->grid.x * launch->block.x;
    /* blockIdx.x * blockDim.x + threadIdx.x, for every block and thread */
    for (uint64_t i = 0; i < threads; i++) {
        if (i < count)
            out[(uint64_t)worker * count + i] = worker * 1000000u + (uint32_t)i;
    }
}
