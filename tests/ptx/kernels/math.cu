// Arithmetic nvcc lowers to many instruction forms: libdevice math,
// half and bfloat16, conversions, 64-bit integer division, bit tricks.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cassert>
__global__ void transcend(const float *in, float *out, double *dout)
{
    int i = threadIdx.x;
    float x = in[i];
    out[i] = sinf(x) + cosf(x) * expf(x) - logf(fabsf(x) + 1.0f) + powf(x, 2.5f) + tanhf(x) + erff(x);
    out[i + 32] = __sinf(x) + __expf(x) + rsqrtf(x) + __fdividef(x, 3.0f) + sqrtf(x) + cbrtf(x);
    dout[i] = sin((double)x) + exp((double)x) / (double)(i + 1) + sqrt((double)x) + fma((double)x, 2.0, 1.0);
}
__global__ void halves(const __half2 *a, const __half2 *b, __half2 *c, __nv_bfloat162 *d)
{
    int i = threadIdx.x;
    c[i] = __hfma2(a[i], b[i], __hadd2(a[i], b[i]));
    d[i] = __hmul2(__float22bfloat162_rn(__half22float2(a[i])), __float22bfloat162_rn(__half22float2(b[i])));
    c[i + 1] = __hmax2(c[i], __hmin2(a[i], b[i]));
}
__global__ void ints(const long long *a, unsigned long long *o, int s)
{
    int i = threadIdx.x;
    long long v = a[i];
    o[i] = (unsigned long long)(v / (s + 1)) + (v % 7) + __popcll(v) + __clzll(v) + __ffsll(v) + __brevll(v);
    o[i + 1] = __umulhi((unsigned)v, 77u) + __byte_perm((unsigned)v, (unsigned)(v >> 32), 0x3210) +
               __funnelshift_l((unsigned)v, (unsigned)s, 5) + __sad(i, s, 3) + __usad(i, s, 3);
    o[i + 2] = (unsigned long long)__double2ll_rn((double)v * 0.5) + __float2uint_rz((float)v) +
               (unsigned)__float_as_int((float)i) + __dp4a(i, s, 1);
    assert(v != 12345);
}
__global__ void selects(const float *a, int *o)
{
    int i = threadIdx.x;
    float x = a[i];
    o[i] = isnan(x) ? 1 : isinf(x) ? 2 : signbit(x) ? 3 : (x > 1.0f && x < 2.0f) ? 4 : (int)copysignf(5.0f, x);
    o[i + 32] = max(min(i, 12), -3) + abs(i - 16) + (int)fminf(x, 2.0f) + (int)fmaxf(x, -2.0f);
}
