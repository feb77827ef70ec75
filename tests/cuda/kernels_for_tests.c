/* CPU implementations of the kernels the cuda tests launch: a plugin that
 * FABMEM_KERNELS names (include/fabmem/kernel.h has the contract). Each
 * writes what it saw into device memory, which is host memory here, so the
 * test reads it back with cuMemcpyDtoH. */
#include <stdint.h>
#include <string.h>

#include "fabmem/kernel.h"

#define KERNEL __attribute__((visibility("default"))) void

void fab_kernel_fill(const fab_launch_t *launch);
void fab_kernel_record(const fab_launch_t *launch);
void fab_kernel__Z5scalePff(const fab_launch_t *launch);

/* fill(unsigned *out, unsigned base): out[i] = base + i for every thread i
 * of the grid, numbered block by block, x fastest. */
KERNEL fab_kernel_fill(const fab_launch_t *launch)
{
    unsigned *out = *(unsigned **)launch->params[0];
    unsigned base = *(const unsigned *)launch->params[1];
    size_t per_block = (size_t)launch->block.x * launch->block.y * launch->block.z;
    size_t blocks = (size_t)launch->grid.x * launch->grid.y * launch->grid.z;
    for (size_t b = 0; b < blocks; b++) {
        for (size_t t = 0; t < per_block; t++)
            out[b * per_block + t] = base + (unsigned)(b * per_block + t);
    }
}

/* record(unsigned *out): the launch as the plugin saw it, in out[0..10]:
 * grid x y z, block x y z, shared bytes, cooperative, device, whether the
 * arguments came packed in extra, and whether the name is "record". */
KERNEL fab_kernel_record(const fab_launch_t *launch)
{
    unsigned *out;
    if (launch->params)
        out = *(unsigned **)launch->params[0];
    else if (launch->arg_buffer && launch->arg_buffer_size >= sizeof(out))
        memcpy(&out, launch->arg_buffer, sizeof(out));
    else
        return;
    out[0] = launch->grid.x;
    out[1] = launch->grid.y;
    out[2] = launch->grid.z;
    out[3] = launch->block.x;
    out[4] = launch->block.y;
    out[5] = launch->block.z;
    out[6] = (unsigned)launch->shared_bytes;
    out[7] = (unsigned)launch->cooperative;
    out[8] = (unsigned)launch->device;
    out[9] = launch->extra != NULL;
    out[10] = strcmp(launch->name, "record") == 0;
}

/* scale(float *p, float f), C++-mangled: p[i] *= f for every thread. */
KERNEL fab_kernel__Z5scalePff(const fab_launch_t *launch)
{
    float *p = *(float **)launch->params[0];
    float f = *(const float *)launch->params[1];
    size_t n = (size_t)launch->grid.x * launch->block.x;
    for (size_t i = 0; i < n; i++)
        p[i] *= f;
}

/* Multicast (docs/cuda.md, "Multicast"). mc_store(unsigned *mc, unsigned v):
 * mc[0] = v through a multicast mapping, published at the launch's end.
 * mc_sum(unsigned *out, const unsigned *mc, unsigned n): out[i] = the sum of
 * element i over every buffer bound under mc, with the reduction helper
 * (multimem.ld_reduce.add.u32 on a GPU); out[n] = its return code. */
void fab_kernel_mc_store(const fab_launch_t *launch);
void fab_kernel_mc_sum(const fab_launch_t *launch);

KERNEL fab_kernel_mc_store(const fab_launch_t *launch)
{
    unsigned *mc = *(unsigned **)launch->params[0];
    mc[0] = *(const unsigned *)launch->params[1];
}

KERNEL fab_kernel_mc_sum(const fab_launch_t *launch)
{
    unsigned *out = *(unsigned **)launch->params[0];
    const unsigned *mc = *(const unsigned **)launch->params[1];
    unsigned n = *(const unsigned *)launch->params[2];
    out[n] = (unsigned)launch->multicast->reduce_add_u32(mc, out, n);
}
