// Memory forms: vector loads, ld.global.nc, volatile and acquire/release
// atomics (cuda::atomic_ref), dynamic and static shared memory, local
// arrays, managed and constant variables, malloc/free, printf of many kinds.
#include <cstdio>
#include <cuda/atomic>
__managed__ int managed_counter;
__constant__ int lut[64] = {1, 2, 3};
__device__ unsigned long long big[1024];
__global__ void vectors(const float4 *__restrict__ a, float4 *b, const int2 *c, double2 *d)
{
    int i = threadIdx.x;
    float4 v = __ldg(&a[i]);
    b[i] = make_float4(v.w, v.z, v.y, v.x);
    int2 w = c[i];
    d[i] = make_double2(w.x, w.y);
    __stcs(&b[i + 1], v);
    float4 u = __ldcs(&a[i + 2]);
    b[i + 2] = u;
}
__global__ void flags(int *data, int *flag)
{
    cuda::atomic_ref<int, cuda::thread_scope_system> f(*flag);
    if (threadIdx.x == 0) {
        data[0] = 42;
        f.store(1, cuda::memory_order_release);
    } else {
        while (f.load(cuda::memory_order_acquire) == 0) {}
        data[threadIdx.x] = data[0];
    }
    cuda::atomic_ref<int, cuda::thread_scope_device> g(data[5]);
    g.fetch_add(1, cuda::memory_order_relaxed);
    managed_counter += lut[threadIdx.x & 63];
}
__global__ void locals(int n, int *out)
{
    int arr[37];
    for (int i = 0; i < 37; i++)
        arr[i] = i * n;
    out[threadIdx.x] = arr[(threadIdx.x * 7) % 37];
    int *p = (int *)malloc(16 * sizeof(int));
    if (p) { p[0] = n; out[0] += p[0]; free(p); }
    printf("n=%d x=%lld s=%s c=%c f=%f p=%p\n", n, (long long)n * 3, "str", 'c', 1.0 / n, out);
}
__global__ void shared2d(const float *in, float *out)
{
    __shared__ float tile[32][33];
    extern __shared__ double dyn[];
    tile[threadIdx.y][threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];
    dyn[threadIdx.x] = tile[threadIdx.x][threadIdx.y];
    __syncthreads();
    out[threadIdx.y * 32 + threadIdx.x] = tile[threadIdx.x][threadIdx.y] + (float)dyn[31 - threadIdx.x];
    big[threadIdx.x] += 1;
}
