// Newer architectures' forms: cp.async, mbarrier, clusters and their
// special registers, elect, griddepcontrol, fp8 conversions, redux.
#include <cuda_fp8.h>
#include <cuda/barrier>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void copies(const int4 *g, int4 *o)
{
#if __CUDA_ARCH__ >= 800
    __shared__ int4 s[64];
    unsigned sa = (unsigned)__cvta_generic_to_shared(&s[threadIdx.x]);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(sa), "l"(&g[threadIdx.x]));
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.wait_group 0;");
    __syncthreads();
    o[threadIdx.x] = s[63 - threadIdx.x];
#endif
}
__global__ void bars(int *o)
{
#if __CUDA_ARCH__ >= 800
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    if (threadIdx.x == 0) init(&bar, blockDim.x);
    __syncthreads();
    bar.arrive_and_wait();
    o[threadIdx.x] = 1;
#endif
}
#if __CUDA_ARCH__ >= 900
__global__ void __cluster_dims__(2, 1, 1) clusters(int *o)
{
    cg::cluster_group c = cg::this_cluster();
    __shared__ int x;
    x = threadIdx.x;
    c.sync();
    int *peer = c.map_shared_rank(&x, (c.block_rank() + 1) % 2);
    o[c.block_rank()] = *peer + c.num_blocks();
    c.sync();
}
#endif
__global__ void fp8(const float *a, __nv_fp8_e4m3 *b, __nv_fp8_e5m2 *c)
{
    b[threadIdx.x] = __nv_fp8_e4m3(a[threadIdx.x]);
    c[threadIdx.x] = __nv_fp8_e5m2(a[threadIdx.x] * 2.0f);
}
