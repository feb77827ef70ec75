// The first kernels the front end had to read: vector add, a shared-memory
// reduction, shuffles, printf, initialized globals and pointers to them,
// atomics, a struct by value, an indirect call, inline asm with a scope of
// its own, dynamic shared memory.
#include <cstdio>
__global__ void vadd(const float *a, const float *b, float *c, int n){int i=blockIdx.x*blockDim.x+threadIdx.x; if(i<n) c[i]=a[i]+b[i];}
__global__ void reduce(const int *in, int *out){ __shared__ int s[256]; int t=threadIdx.x; s[t]=in[blockIdx.x*256+t]; __syncthreads(); for(int k=128;k>0;k>>=1){ if(t<k) s[t]+=s[t+k]; __syncthreads();} if(t==0) atomicAdd(out,s[0]);}
__global__ void shf(int *o){ int v=threadIdx.x; for(int d=16;d>0;d/=2) v+=__shfl_down_sync(0xffffffff,v,d); if(threadIdx.x==0) *o=v; }
__global__ void pr(int x){ printf("hello %d %f\n", x, 1.5); }
__device__ int g[4] = {1,2,3,4};
__device__ int *gp = &g[2];
__constant__ float cf[3] = {1.0f, 2.5f, -3.0f};
__global__ void atom(unsigned long long *p, float *f, double *d){ atomicCAS(p, 1ull, 2ull); atomicAdd(f, 1.0f); atomicAdd(d, 2.0); atomicMax((int*)p, 3); }
struct S { int a; double b; char c[5]; };
__global__ void bystruct(S s, int *o){ *o = s.a + (int)s.b + s.c[3]; }
__device__ __noinline__ int helper(int x){ return x*3; }
__device__ int (*fp)(int) = helper;
__global__ void ind(int *o){ *o = fp(*o); }
__global__ void inl(int *o){ int r; asm volatile("{ .reg .u32 t; mov.u32 t, %1; add.u32 %0, t, 1; }" : "=r"(r) : "r"(*o)); *o = r; }
__global__ void dyn(int *o){ extern __shared__ int ds[]; ds[threadIdx.x]=threadIdx.x; __syncthreads(); o[threadIdx.x]=ds[31-threadIdx.x]; }
