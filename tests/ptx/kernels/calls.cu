// Calls: functions of the same file and of another (-rdc=true leaves them
// .extern), structs by value and returned, virtual functions, function
// pointers, recursion, static kernels, templates and anonymous namespaces.
struct Big { double a[5]; int b; };
struct Small { short s; char c; };
extern __device__ int ext_fn(int);
extern __device__ int ext_arr[];
__device__ __noinline__ Big make_big(int x) { Big b; for (int i = 0; i < 5; i++) b.a[i] = x * i; b.b = x; return b; }
__device__ __noinline__ int take_big(Big b, Small s) { return (int)b.a[3] + b.b + s.s + s.c; }
__device__ __noinline__ int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }
struct Shape { __device__ virtual int area() const { return 0; } };
struct Sq : Shape { int s; __device__ Sq(int s) : s(s) {} __device__ int area() const override { return s * s; } };
__global__ void by_value(Big b, Small s, int *o) { Big c = make_big(o[0]); o[1] = take_big(c, s) + take_big(b, s) + fact(o[2]); }
__global__ void virt(int *o) { Sq q(o[0]); Shape *p = &q; o[1] = p->area(); }
__global__ void externs(int *o) { o[0] = ext_fn(o[1]) + ext_arr[o[2]]; }
static __global__ void hidden(int *o) { o[0] = 1; }
namespace { __global__ void anon(int *o) { o[0] = 2; } }
template <typename T, int N> __global__ void templ(T *o) { o[threadIdx.x] = (T)N; }
template __global__ void templ<float, 3>(float *);
template __global__ void templ<double, 4>(double *);
void launch_all(int *o) { hidden<<<1, 1>>>(o); anon<<<1, 1>>>(o); }
