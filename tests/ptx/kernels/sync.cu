// Synchronisation and warp collectives: every atomic, votes, matches,
// reductions, fences, named barriers, cooperative groups, grid sync.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void atomics(int *i, unsigned *u, unsigned long long *ull, float *f, double *d)
{
    int t = threadIdx.x;
    atomicAdd(i, t); atomicSub(i, 1); atomicExch(i, t); atomicMin(i, t); atomicMax(i, t);
    atomicInc(u, 17u); atomicDec(u, 17u); atomicCAS(i, t, t + 1); atomicAnd(i, 3); atomicOr(i, 4);
    atomicXor(i, 5); atomicAdd(ull, 1ull); atomicMin(ull, 3ull); atomicCAS(ull, 1ull, 2ull);
    atomicAdd(f, 1.0f); atomicAdd(d, 1.0); atomicExch(f, 2.0f);
    atomicAdd_block(i, 1); atomicAdd_system(i, 1);
    __threadfence(); __threadfence_block(); __threadfence_system();
}
__global__ void warps(const int *in, int *out)
{
    int t = threadIdx.x, v = in[t];
    unsigned m = __activemask();
    out[t] = __shfl_sync(m, v, 0) + __shfl_up_sync(m, v, 1) + __shfl_xor_sync(m, v, 4) + __shfl_down_sync(m, v, 2, 16);
    out[t + 32] = __all_sync(m, v > 0) + __any_sync(m, v > 3) + __ballot_sync(m, v & 1) + __uni_sync(m, v);
#if __CUDA_ARCH__ >= 800
    out[t + 64] = __match_any_sync(m, v) + __match_all_sync(m, v, &v) + __reduce_add_sync(m, v) +
                  __reduce_min_sync(m, v) + __reduce_or_sync(m, (unsigned)v);
#endif
    __syncwarp(m);
    out[t + 96] = __syncthreads_count(v > 1) + __syncthreads_and(v) + __syncthreads_or(v);
    float fv = __shfl_xor_sync(m, (float)v, 1);
    double dv = __shfl_down_sync(m, (double)v, 1);
    out[t + 128] = (int)(fv + dv);
}
__global__ void groups(int *data, int *out)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    int v = data[block.thread_rank()];
    int s = cg::reduce(tile, v, cg::plus<int>());
    block.sync();
    if (tile.thread_rank() == 0)
        atomicAdd(out, s);
    cg::grid_group grid = cg::this_grid();
    grid.sync();
    if (grid.thread_rank() == 0)
        out[1] = *out;
}
__global__ void named(volatile int *flag, int *out)
{
    if (threadIdx.x < 64) {
        asm volatile("bar.arrive 1, 128;");
    } else {
        asm volatile("bar.sync 1, 128;");
        out[threadIdx.x] = *flag;
    }
    while (*flag == 0)
        __nanosleep(32);
    unsigned long long c = clock64();
    unsigned smid;
    asm("mov.u32 %0, %%smid;" : "=r"(smid));
    unsigned long long gt;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(gt));
    out[0] = (int)(c + smid + gt);
}
