// Kernels for the interpreter's nvcc tests (tests/ptx/test_exec_nvcc.c):
// compiled with nvcc -ptx at build time, their PTX run by the engine and
// each result checked against the host. extern "C" keeps the names plain.
#include <cassert>
#include <cstdio>
#include <cooperative_groups.h>
#include <cuda_fp16.h>

extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

extern "C" __global__ void reduce(const int *in, int *out, int *total)
{
    __shared__ int s[256];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k)
            s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0) {
        out[blockIdx.x] = s[0];
        atomicAdd(total, s[0]);
    }
}

extern "C" __global__ void dynreduce(const int *in, int *out)
{
    extern __shared__ int ds[];
    unsigned t = threadIdx.x;
    ds[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    if (t == 0) {
        int s = 0;
        for (unsigned i = 0; i < blockDim.x; i++)
            s += ds[i];
        out[blockIdx.x] = s;
    }
}

extern "C" __global__ void warps(const int *in, int *out)
{
    int t = threadIdx.x, v = in[t];
    int s = v;
    for (int o = 16; o > 0; o >>= 1)
        s += __shfl_down_sync(0xffffffff, s, o);
    int x = __shfl_xor_sync(0xffffffff, v, 5);
    int u = __shfl_up_sync(0xffffffff, v, 3);
    int w8 = __shfl_sync(0xffffffff, v, 2, 8);
    unsigned all = __all_sync(0xffffffff, v >= 0), any = __any_sync(0xffffffff, v == 7);
    unsigned ball = __ballot_sync(0xffffffff, v & 1);
    unsigned match = __match_any_sync(0xffffffff, v % 3);
    int rmin = __reduce_min_sync(0xffffffff, v), radd = __reduce_add_sync(0xffffffff, (unsigned)v);
    unsigned act = 0;
    if (t & 1)
        act = __activemask();
    int *o = out + t * 10;
    o[0] = s; o[1] = x; o[2] = u; o[3] = w8; o[4] = (int)all; o[5] = (int)any; o[6] = (int)ball;
    o[7] = (int)match; o[8] = rmin + radd; o[9] = (int)act;
}

extern "C" __global__ void diverge(int *out)
{
    int t = threadIdx.x, v = 0;
    if (t & 1) {
        if (t & 2)
            v = 3;
        else
            v = 1;
    } else {
        v = 2;
    }
    for (int i = 0; i < 100; i++) {
        v += i;
        if (i == t % 7)
            break;
        if (i > 2 && (t & 4))
            continue;
        v *= 2;
    }
    int b = __ballot_sync(0xffffffff, v > 10);
    out[t] = v * 1000 + __popc(b);
}

__device__ __noinline__ int fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

extern "C" __global__ void recurse(int *out)
{
    out[threadIdx.x] = fib(threadIdx.x % 12);
}

typedef int (*binop_t)(int, int);
__device__ __noinline__ int op_add(int a, int b) { return a + b; }
__device__ __noinline__ int op_mul(int a, int b) { return a * b; }
__device__ binop_t ops[2] = {op_add, op_mul};

extern "C" __global__ void indirect(int *out)
{
    int t = threadIdx.x;
    out[t] = ops[t & 1](t, 3);
}

extern "C" __global__ void hello(int x)
{
    printf("hello %d from %d: %.2f %s %lld\n", x, threadIdx.x, 1.5, "str", -5ll);
}

extern "C" __global__ void asserts(int x)
{
    assert(x == threadIdx.x);
}

extern "C" __global__ void fmath(const float *in, float *out, double *dout)
{
    int t = threadIdx.x;
    float a = in[t];
    out[t * 6 + 0] = sqrtf(a);
    out[t * 6 + 1] = __fdividef(a, 3.0f);
    out[t * 6 + 2] = __sinf(a) + __expf(a / 10);
    out[t * 6 + 3] = __half2float(__float2half(a) * __float2half(0.5f));
    out[t * 6 + 4] = (float)__float2int_rn(a * 7.3f) + fminf(a, 2.0f);
    out[t * 6 + 5] = a / 7.0f;
    dout[t] = sqrt((double)a) + (double)t / 3.0;
}

extern "C" __global__ void intops(const int *in, int *out)
{
    int t = threadIdx.x, a = in[t], b = in[t + 32] | 1;
    unsigned ua = (unsigned)a, ub = (unsigned)b;
    int *o = out + t * 16;
    o[0] = __mulhi(a, b);
    o[1] = (int)__umulhi(ua, ub);
    o[2] = a / b;
    o[3] = a % b;
    o[4] = (int)(ua / ub);
    o[5] = a >> (t & 31);
    o[6] = (int)(ua >> (t & 31));
    o[7] = (int)__brev(ua);
    o[8] = __clz(a) + __ffs(a) * 64 + __popc(a) * 4096;
    o[9] = (int)__byte_perm(ua, ub, 0x5173);
    o[10] = (int)__funnelshift_l(ua, ub, t);
    o[11] = (int)__funnelshift_r(ua, ub, t);
    o[12] = max(a, b) - min(a, b) + abs(a);
    o[13] = (int)__sad(a, b, 7);
    o[14] = __mul24(a, b);
    o[15] = __dp4a(a, b, t);
}

extern "C" __global__ void localmem(const int *in, int *out)
{
    int buf[40];
    int t = threadIdx.x;
    for (int i = 0; i < 40; i++)
        buf[i] = in[(i * 7 + t) % 64];
    int s = 0;
    for (int i = 0; i < 40; i++)
        s += buf[(in[i] + t) % 40] * (i + 1);
    out[t] = s;
}

extern "C" __global__ void spinflag(volatile int *flag, int *count)
{
    if (blockIdx.x == gridDim.x - 1) {
        if (threadIdx.x == 0) {
            __threadfence();
            *flag = 1;
        }
        return;
    }
    while (*flag == 0) {
    }
    atomicAdd(count, 1);
}

extern "C" __global__ void atoms(unsigned *u, float *f, int *mx, unsigned long long *ull)
{
    atomicAdd(&u[0], 1);
    atomicInc(&u[1], 9);
    atomicCAS(&u[3], 0, threadIdx.x + 1);
    atomicAdd(f, 0.5f);
    atomicMax(mx, (int)threadIdx.x - 50);
    atomicMin(mx + 1, -(int)threadIdx.x);
    atomicOr(&u[4], 1u << (threadIdx.x % 32));
    atomicSub(&u[5], 2);
    atomicDec(&u[6], 4);
    atomicAdd(ull, 3ull);
    unsigned old;
    do
        old = u[7];
    while (atomicCAS(&u[7], old, old + 2) != old);
}

// Producers (warps 0, 1) fill shared memory and arrive at barrier 1;
// consumers (warps 2, 3) wait there for 128 threads, then read.
extern "C" __global__ void named(int *out)
{
    __shared__ int s[64];
    int t = threadIdx.x;
    if (t < 64) {
        s[t] = t * t;
        asm volatile("bar.arrive 1, 128;" ::: "memory");
    } else {
        asm volatile("bar.sync 1, 128;" ::: "memory");
        out[t - 64] = s[t - 64] + s[127 - t];
    }
    int c = __syncthreads_count(t % 3 == 0);
    int a = __syncthreads_and(t < 1000);
    int o = __syncthreads_or(t == 77);
    if (t == 0)
        out[64] = c * 100 + a * 10 + o;
}

extern "C" __global__ void badaddr(int *p)
{
    p[threadIdx.x] = 1;
}

extern "C" __global__ void heap(int *out)
{
    int *p = (int *)malloc(16 * sizeof(int));
    for (int i = 0; i < 16; i++)
        p[i] = i * threadIdx.x;
    int s = 0;
    for (int i = 0; i < 16; i++)
        s += p[i];
    free(p);
    out[threadIdx.x] = s;
}

// Every block writes, the whole grid syncs (cooperative groups: an atom and
// a spin on a workspace the launch gives), then each reads another's.
extern "C" __global__ void gridsync(int *buf, int *out)
{
    cooperative_groups::grid_group g = cooperative_groups::this_grid();
    int i = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
    buf[i] = i * 3;
    g.sync();
    out[i] = buf[(i + blockDim.x) % n];
    g.sync();
    buf[i] = -1;
}
