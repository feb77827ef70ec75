// Initialized tables: structs with pointers (relocations, byte masks in a
// packed one), function-pointer tables and their indirect calls, switch
// jump tables, launch bounds, extern variables and functions (-rdc=true).
struct P { int a; int *p; char c; };
__device__ int arr[8];
__device__ P ps = {3, &arr[1], 'x'};
__device__ P pa[2] = {{1, arr, 'a'}, {2, &arr[4], 'b'}};
__device__ void (*fns[2])(int*);
__device__ __noinline__ void f1(int *p){*p=1;}
__device__ __noinline__ void f2(int *p){*p=2;}
__device__ void (*tbl[2])(int*) = {f1, f2};
__device__ double dd[3] = {1.0, -2.5e10, 3};
struct __attribute__((packed)) Packed { char c; int *p; };
__device__ Packed packed = {1, &arr[1]};      // byte masks: 0xFF00(generic(arr)+4)
__device__ const char *strs[2] = {"ab", "cde"};

__global__ void k(int *o, int i){ tbl[i&1](o); switch(i){case 0:*o=4;break;case 1:*o=7;break;case 2:*o=9;break;case 3:*o=1;break;case 4:*o=3;break;case 5:*o=12;break;} }
__global__ void __launch_bounds__(256, 2) lb(float4 *o, const float4 *__restrict__ in){ o[threadIdx.x] = in[threadIdx.x]; __nanosleep(100); unsigned m=__activemask(); o[0].x=__ballot_sync(m,1); }
extern __device__ int ext_var;
extern __device__ int ext_fn(int);
__global__ void ext(int *o){ *o = ext_fn(ext_var); }
