// Library code nvcc compiles often: CUB block primitives, warp matrix
// multiply (wmma), texture and surface objects, half-precision atomics.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;
__global__ void cub_reduce(const int *in, int *out)
{
    typedef cub::BlockReduce<int, 128> R;
    typedef cub::BlockScan<int, 128> S;
    __shared__ typename R::TempStorage rt;
    __shared__ typename S::TempStorage st;
    int v = in[threadIdx.x], x;
    int s = R(rt).Sum(v);
    __syncthreads();
    S(st).ExclusiveSum(v, x);
    out[threadIdx.x] = x;
    if (threadIdx.x == 0) out[128] = s;
}
__global__ void tensor(const half *a, const half *b, float *c)
{
#if __CUDA_ARCH__ >= 700
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
#endif
}
__global__ void textures(cudaTextureObject_t t, cudaSurfaceObject_t s, float *o)
{
    float v = tex1Dfetch<float>(t, threadIdx.x) + tex2D<float>(t, 0.5f, 0.5f);
    surf2Dwrite(v, s, threadIdx.x * 4, 0);
    o[threadIdx.x] = v;
}
__global__ void halfatomics(__half *h, __half2 *h2, float *f)
{
    atomicAdd(h, __float2half(1.0f));
    atomicAdd(h2, __floats2half2_rn(1.0f, 2.0f));
    if (f[0] < 0) __trap();
    __prof_trigger(3);
}
