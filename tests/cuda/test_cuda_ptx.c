/* Kernels as written, through the driver API only: PTX loaded with
 * cuModuleLoadData or linked with cuLink*, launched with no plugin, run by
 * the PTX engine. One behaviour each: the launch is asynchronous and copies
 * its arguments; a module's variable is the kernel's; the linker resolves
 * .extern across inputs and reports malformed input by line; a fault is an
 * error of its context (sticky until the context is destroyed or reset),
 * never a crash; device printf and assert;
 * function attributes come from the kernel; kernels in two processes pass
 * data through release/acquire flags on one shared allocation. */
#include "cuda_test.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#define PTX_HEAD ".version 8.0\n.target sm_80\n.address_size 64\n"

/* out[i] = a[i] + b[i] for i < n (what nvcc makes of a vector add). */
static const char vadd_ptx[] = PTX_HEAD
    ".visible .entry vadd(.param .u64 a, .param .u64 b, .param .u64 out, .param .u32 n)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<6>;\n"
    "  .reg .f32 %f<4>;\n"
    "  .reg .b64 %rd<10>;\n"
    "  ld.param.u64 %rd1, [a];\n"
    "  ld.param.u64 %rd2, [b];\n"
    "  ld.param.u64 %rd3, [out];\n"
    "  ld.param.u32 %r2, [n];\n"
    "  mov.u32 %r3, %ctaid.x;\n"
    "  mov.u32 %r4, %ntid.x;\n"
    "  mov.u32 %r5, %tid.x;\n"
    "  mad.lo.s32 %r1, %r3, %r4, %r5;\n"
    "  setp.ge.s32 %p1, %r1, %r2;\n"
    "  @%p1 bra DONE;\n"
    "  cvta.to.global.u64 %rd4, %rd1;\n"
    "  mul.wide.s32 %rd5, %r1, 4;\n"
    "  add.s64 %rd6, %rd4, %rd5;\n"
    "  cvta.to.global.u64 %rd7, %rd2;\n"
    "  add.s64 %rd8, %rd7, %rd5;\n"
    "  ld.global.f32 %f1, [%rd8];\n"
    "  ld.global.f32 %f2, [%rd6];\n"
    "  add.f32 %f3, %f2, %f1;\n"
    "  cvta.to.global.u64 %rd9, %rd3;\n"
    "  add.s64 %rd9, %rd9, %rd5;\n"
    "  st.global.f32 [%rd9], %f3;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n";

/* Spins until *flag is nonzero, then writes 1 + *flag to *out: a kernel
 * that cannot finish before the host lets it. */
static const char wait_ptx[] = PTX_HEAD
    ".visible .entry wait_flag(.param .u64 flag, .param .u64 out)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<4>;\n"
    "  .reg .b64 %rd<3>;\n"
    "  ld.param.u64 %rd1, [flag];\n"
    "  ld.param.u64 %rd2, [out];\n"
    "SPIN:\n"
    "  ld.volatile.global.u32 %r1, [%rd1];\n"
    "  setp.eq.u32 %p1, %r1, 0;\n"
    "  @%p1 bra SPIN;\n"
    "  add.u32 %r2, %r1, 1;\n"
    "  st.global.u32 [%rd2], %r2;\n"
    "  ret;\n"
    "}\n";

/* Adds its argument to the module's variable `total` (initialised 5), once
 * per thread, with an atomic. */
static const char global_ptx[] = PTX_HEAD
    ".visible .global .align 4 .u32 total = 5;\n"
    ".visible .entry add_total(.param .u32 v)\n"
    "{\n"
    "  .reg .b32 %r<3>;\n"
    "  .reg .b64 %rd<2>;\n"
    "  ld.param.u32 %r1, [v];\n"
    "  mov.u64 %rd1, total;\n"
    "  atom.global.add.u32 %r2, [%rd1], %r1;\n"
    "  ret;\n"
    "}\n";

/* Stores 7 at the address it is given. */
static const char store_ptx[] = PTX_HEAD
    ".visible .entry store7(.param .u64 p)\n"
    "{\n"
    "  .reg .b32 %r<2>;\n"
    "  .reg .b64 %rd<2>;\n"
    "  ld.param.u64 %rd1, [p];\n"
    "  mov.u32 %r1, 7;\n"
    "  st.global.u32 [%rd1], %r1;\n"
    "  ret;\n"
    "}\n";

/* Two inputs for the linker: the kernel calls twice(), which the other
 * defines. */
static const char caller_ptx[] = PTX_HEAD
    ".extern .func (.param .b32 r) twice(.param .b32 x);\n"
    ".visible .entry call_twice(.param .u64 out, .param .u32 x)\n"
    "{\n"
    "  .reg .b32 %r<3>;\n"
    "  .reg .b64 %rd<2>;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u32 %r1, [x];\n"
    "  {\n"
    "  .param .b32 arg0;\n"
    "  st.param.b32 [arg0], %r1;\n"
    "  .param .b32 ret0;\n"
    "  call.uni (ret0), twice, (arg0);\n"
    "  ld.param.b32 %r2, [ret0];\n"
    "  }\n"
    "  st.global.u32 [%rd1], %r2;\n"
    "  ret;\n"
    "}\n";
static const char callee_ptx[] = PTX_HEAD
    ".visible .func (.param .b32 r) twice(.param .b32 x)\n"
    "{\n"
    "  .reg .b32 %r<3>;\n"
    "  ld.param.b32 %r1, [x];\n"
    "  add.s32 %r2, %r1, %r1;\n"
    "  st.param.b32 [r], %r2;\n"
    "  ret;\n"
    "}\n";

/* printf("hello %d\n", 41 + 1) through vprintf, as nvcc calls it. */
static const char printf_ptx[] = PTX_HEAD
    ".extern .func (.param .b32 func_retval0) vprintf(.param .b64 fmt, .param .b64 args);\n"
    ".global .align 1 .b8 fmt[10] = {104, 101, 108, 108, 111, 32, 37, 100, 10, 0};\n"
    ".visible .entry say()\n"
    "{\n"
    "  .local .align 8 .b8 depot[8];\n"
    "  .reg .b32 %r<3>;\n"
    "  .reg .b64 %rd<5>;\n"
    "  mov.u64 %rd1, depot;\n"
    "  cvta.local.u64 %rd2, %rd1;\n"
    "  mov.u32 %r1, 42;\n"
    "  st.local.u32 [%rd1], %r1;\n"
    "  mov.u64 %rd3, fmt;\n"
    "  cvta.global.u64 %rd4, %rd3;\n"
    "  {\n"
    "  .param .b64 p0;\n"
    "  st.param.b64 [p0], %rd4;\n"
    "  .param .b64 p1;\n"
    "  st.param.b64 [p1], %rd2;\n"
    "  .param .b32 rv;\n"
    "  call.uni (rv), vprintf, (p0, p1);\n"
    "  ld.param.b32 %r2, [rv];\n"
    "  }\n"
    "  ret;\n"
    "}\n";

/* A trap: the launch fails. */
static const char trap_ptx[] = PTX_HEAD
    ".visible .entry boom()\n"
    "{\n"
    "  trap;\n"
    "  ret;\n"
    "}\n";

static CUmodule load(const char *ptx)
{
    CUmodule mod = NULL;
    CU_OK(cuModuleLoadData(&mod, ptx));
    return mod;
}

static CUfunction function(CUmodule mod, const char *name)
{
    CUfunction f = NULL;
    CU_OK(cuModuleGetFunction(&f, mod, name));
    return f;
}

static void a_ptx_kernel_runs_without_a_plugin(void **state)
{
    (void)state;
    cut_init(0);
    CUmodule mod = load(vadd_ptx);
    CUfunction f = function(mod, "vadd");
    enum { N = 1000 };
    CUdeviceptr a, b, out;
    CU_OK(cuMemAlloc(&a, N * sizeof(float)));
    CU_OK(cuMemAlloc(&b, N * sizeof(float)));
    CU_OK(cuMemAlloc(&out, N * sizeof(float)));
    float ha[N], hb[N], ho[N];
    for (int i = 0; i < N; i++) {
        ha[i] = (float)i;
        hb[i] = 0.5f * (float)i;
    }
    CU_OK(cuMemcpyHtoD(a, ha, sizeof(ha)));
    CU_OK(cuMemcpyHtoD(b, hb, sizeof(hb)));
    CU_OK(cuMemsetD8(out, 0, sizeof(ho)));
    unsigned n = N;
    void *params[] = {&a, &b, &out, &n};
    CU_OK(cuLaunchKernel(f, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, params, NULL));
    CU_OK(cuCtxSynchronize());
    CU_OK(cuMemcpyDtoH(ho, out, sizeof(ho)));
    for (int i = 0; i < N; i++)
        assert_true(ho[i] == ha[i] + hb[i]);
    CU_OK(cuMemFree(a));
    CU_OK(cuMemFree(b));
    CU_OK(cuMemFree(out));
    CU_OK(cuModuleUnload(mod));
}

/* The launch returns while the kernel still waits for the host, and its
 * arguments were copied: the array that held them is overwritten before
 * the kernel reads them. */
static void a_launch_returns_before_the_kernel_runs_and_copies_its_arguments(void **state)
{
    (void)state;
    cut_init(0);
    CUmodule mod = load(wait_ptx);
    CUfunction f = function(mod, "wait_flag");
    unsigned *host;
    CU_OK(cuMemAllocHost((void **)&host, 2 * sizeof(unsigned)));
    host[0] = host[1] = 0;
    CUdeviceptr flag = (CUdeviceptr)(uintptr_t)&host[0], out = (CUdeviceptr)(uintptr_t)&host[1];
    CUdeviceptr args[2] = {flag, out};
    void *params[] = {&args[0], &args[1]};
    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, params, NULL));
    args[0] = args[1] = 0; /* the kernel must not see these */
    CU_IS(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
    __atomic_store_n(&host[0], 41u, __ATOMIC_RELEASE);
    CU_OK(cuStreamSynchronize(s));
    assert_int_equal(__atomic_load_n(&host[1], __ATOMIC_ACQUIRE), 42);
    CU_OK(cuStreamDestroy(s));
    CU_OK(cuMemFreeHost(host));
    CU_OK(cuModuleUnload(mod));
}

static void a_module_variable_is_the_one_its_kernels_use(void **state)
{
    (void)state;
    cut_init(0);
    CUmodule mod = load(global_ptx);
    CUfunction f = function(mod, "add_total");
    CUdeviceptr total;
    size_t bytes = 0;
    CU_OK(cuModuleGetGlobal(&total, &bytes, mod, "total"));
    assert_int_equal(bytes, 4);
    unsigned v = 3;
    void *params[] = {&v};
    CU_OK(cuLaunchKernel(f, 4, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
    CU_OK(cuCtxSynchronize());
    unsigned got = 0;
    CU_OK(cuMemcpyDtoH(&got, total, sizeof(got)));
    assert_int_equal(got, 5 + 3 * 4 * 64); /* its initial value, then every thread's add */
    CU_OK(cuModuleUnload(mod));
}

static void a_packed_argument_buffer_is_taken_through_extra(void **state)
{
    (void)state;
    cut_init(0);
    CUmodule mod = load(store_ptx);
    CUfunction f = function(mod, "store7");
    CUdeviceptr p;
    CU_OK(cuMemAlloc(&p, 4));
    CU_OK(cuMemsetD32(p, 0, 1));
    size_t size = sizeof(p);
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &p, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
    CU_OK(cuCtxSynchronize());
    unsigned got = 0;
    CU_OK(cuMemcpyDtoH(&got, p, 4));
    assert_int_equal(got, 7);
    CU_OK(cuMemFree(p));
    CU_OK(cuModuleUnload(mod));
}

/* NCCL's kernels take a 4 KiB parameter block and are launched with the bytes
 * of it in use (CU_LAUNCH_PARAM_BUFFER_SIZE less than the kernel's parameters):
 * those bytes are the kernel's, the rest read zero. */
static const char padded_ptx[] = PTX_HEAD
    ".visible .entry store_first(.param .align 8 .b8 args[4096])\n"
    "{\n"
    "  .reg .b32 %r<2>;\n"
    "  .reg .b64 %rd<2>;\n"
    "  ld.param.u64 %rd1, [args];\n"
    "  ld.param.u32 %r1, [args+8];\n"
    "  add.u32 %r1, %r1, 7;\n"
    "  st.global.u32 [%rd1], %r1;\n"
    "  ld.param.u32 %r1, [args+4092];\n"
    "  st.global.u32 [%rd1+4], %r1;\n"
    "  ret;\n"
    "}\n";

static void an_argument_buffer_shorter_than_the_parameters_is_taken(void **state)
{
    (void)state;
    cut_init(0);
    CUmodule mod = load(padded_ptx);
    CUfunction f = function(mod, "store_first");
    CUdeviceptr p;
    CU_OK(cuMemAlloc(&p, 8));
    CU_OK(cuMemsetD32(p, 0xffffffffu, 2));
    struct { CUdeviceptr p; uint32_t add; } args = {p, 35};
    size_t size = 12; /* of 4096 */
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &args, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
    CU_OK(cuCtxSynchronize());
    uint32_t got[2] = {0, 1};
    CU_OK(cuMemcpyDtoH(got, p, sizeof(got)));
    assert_int_equal(got[0], 42);
    assert_int_equal(got[1], 0);
    CU_OK(cuMemFree(p));
    CU_OK(cuModuleUnload(mod));
}

/* A store to a reserved range with nothing mapped: the kernel stops with
 * ILLEGAL_ADDRESS, the process lives on, and the error stays. */
static void an_illegal_address_stops_the_kernel_and_sticks(void **state)
{
    (void)state;
    const char *vg = getenv("FABTEST_UNDER_VALGRIND");
    if (vg && *vg == '1')
        fab_test_skip("memcheck reports the store to unmapped memory this test makes on purpose");
    cut_init(0);
    CUmodule mod = load(store_ptx);
    CUfunction f = function(mod, "store7");
    size_t g = cut_granularity(0);
    CUdeviceptr hole;
    CU_OK(cuMemAddressReserve(&hole, g, 0, 0, 0));
    void *params[] = {&hole};
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    CU_IS(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    /* sticky: later synchronisations and launches answer it too */
    CU_IS(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    CU_IS(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL), CUDA_ERROR_ILLEGAL_ADDRESS);
    CU_OK(cuMemAddressFree(hole, g));
}

/* Launch store7 at an address reserved with nothing mapped (the kernel
 * faults) in the current context, and expect the fault at synchronisation.
 * The reservation is freed by the caller (*hole_out, g). */
static void fault_in_current_context(CUfunction f, CUdeviceptr *hole_out, size_t g)
{
    CU_OK(cuMemAddressReserve(hole_out, g, 0, 0, 0));
    void *params[] = {hole_out};
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    CU_IS(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
}

/* store7 into fresh memory in the current context: the kernel runs and the
 * synchronisation answers success. */
static void store7_runs(CUfunction f)
{
    CUdeviceptr p;
    CU_OK(cuMemAlloc(&p, 4));
    CU_OK(cuMemsetD32(p, 0, 1));
    void *params[] = {&p};
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    CU_OK(cuCtxSynchronize());
    uint32_t got = 0;
    CU_OK(cuMemcpyDtoH(&got, p, 4));
    assert_int_equal(got, 7);
    CU_OK(cuMemFree(p));
}

static bool under_valgrind(void)
{
    const char *vg = getenv("FABTEST_UNDER_VALGRIND");
    return vg && *vg == '1';
}

/* The start of a test of faults across contexts: skipped under valgrind
 * (memcheck reports the fault's store), the primary context of device 0
 * current; *dev_out is the device, and the granularity is returned. */
static size_t contexts_test_start(CUdevice *dev_out)
{
    if (under_valgrind())
        fab_test_skip("memcheck reports the store to unmapped memory this test makes on purpose");
    cut_init(0);
    CU_OK(cuDeviceGet(dev_out, 0));
    return cut_granularity(0);
}

/* A new context on dev, current (*ctx_out), with store_ptx loaded in it:
 * its store7. The module goes with the context. */
static CUfunction store7_in_a_new_context(CUdevice dev, CUcontext *ctx_out)
{
    CU_OK(cuCtxCreate(ctx_out, NULL, 0, dev));
    return function(load(store_ptx), "store7");
}

/* The fault is its context's: once that context is destroyed, a context
 * made afterwards on the same device runs kernels (the driver's behaviour;
 * a library whose tests each make a context must not see one test's fault
 * in every later test). A context made while the faulted one lives is clean
 * too; the faulted one stays lost. */
static void a_fault_stays_with_its_context(void **state)
{
    (void)state;
    CUdevice dev;
    size_t g = contexts_test_start(&dev);
    CUcontext lost, other, fresh;
    CUfunction f = store7_in_a_new_context(dev, &lost);
    CUdeviceptr hole;
    fault_in_current_context(f, &hole, g);
    CU_OK(cuCtxCreate(&other, NULL, 0, dev)); /* pushed: current */
    CUmodule mod2 = load(store_ptx);
    store7_runs(function(mod2, "store7"));
    CU_OK(cuModuleUnload(mod2));
    CU_OK(cuCtxDestroy(other));
    CU_OK(cuCtxSetCurrent(lost));
    CU_IS(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    CU_OK(cuCtxDestroy(lost));
    CU_OK(cuCtxCreate(&fresh, NULL, 0, dev));
    CUmodule mod3 = load(store_ptx);
    store7_runs(function(mod3, "store7"));
    CU_OK(cuModuleUnload(mod3));
    CU_OK(cuCtxDestroy(fresh));
    CU_OK(cuMemAddressFree(hole, g));
}

/* A stream's synchronisation answers the sticky fault of the stream's own
 * context, not of the current one: a stream of the faulted context reports
 * it while a healthy context is current, and that healthy context's stream
 * reports success. The same for events (the recording stream's context) and
 * for cuCtxSynchronize_v2 given a context other than the current one. */
static void a_stream_synchronisation_answers_its_own_contexts_fault(void **state)
{
    (void)state;
    CUdevice dev;
    size_t g = contexts_test_start(&dev);
    CUcontext lost, healthy;
    CUfunction f = store7_in_a_new_context(dev, &lost);
    CUstream s_lost;
    CUevent e_lost;
    CU_OK(cuStreamCreate(&s_lost, CU_STREAM_NON_BLOCKING));
    CU_OK(cuEventCreate(&e_lost, 0));
    CUdeviceptr hole;
    CU_OK(cuMemAddressReserve(&hole, g, 0, 0, 0));
    void *params[] = {&hole};
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s_lost, params, NULL));
    CU_OK(cuEventRecord(e_lost, s_lost));
    CU_OK(cuCtxCreate(&healthy, NULL, 0, dev)); /* pushed: current */
    CUstream s_ok;
    CUevent e_ok;
    CU_OK(cuStreamCreate(&s_ok, CU_STREAM_NON_BLOCKING));
    CU_OK(cuEventCreate(&e_ok, 0));
    CU_OK(cuEventRecord(e_ok, s_ok));
    CU_IS(cuStreamSynchronize(s_lost), CUDA_ERROR_ILLEGAL_ADDRESS);
    CU_IS(cuEventSynchronize(e_lost), CUDA_ERROR_ILLEGAL_ADDRESS);
    CU_IS(cuCtxSynchronize_v2(lost), CUDA_ERROR_ILLEGAL_ADDRESS);
    CU_OK(cuStreamSynchronize(s_ok));
    CU_OK(cuEventSynchronize(e_ok));
    CU_OK(cuCtxSynchronize());
    CU_OK(cuCtxSetCurrent(lost));
    CU_OK(cuStreamSynchronize(s_ok));
    CU_OK(cuEventSynchronize(e_ok));
    CU_OK(cuCtxSynchronize_v2(healthy));
    CU_OK(cuStreamDestroy(s_ok));
    CU_OK(cuEventDestroy(e_ok));
    CU_OK(cuCtxDestroy(healthy));
    CU_OK(cuCtxSetCurrent(lost));
    CU_OK(cuStreamDestroy(s_lost));
    CU_OK(cuEventDestroy(e_lost));
    CU_OK(cuCtxDestroy(lost));
    CU_OK(cuMemAddressFree(hole, g));
}

/* cuDevicePrimaryCtxReset: the primary context's fault goes, the holder may
 * still release it (cuda.h), and once retained again it runs kernels. */
static void resetting_the_primary_context_clears_its_fault(void **state)
{
    (void)state;
    if (under_valgrind())
        fab_test_skip("memcheck reports the store to unmapped memory this test makes on purpose");
    cut_init(0); /* retains the primary context: one reference */
    size_t g = cut_granularity(0);
    CUdevice dev;
    CU_OK(cuDeviceGet(&dev, 0));
    CUmodule mod = load(store_ptx);
    CUdeviceptr hole;
    fault_in_current_context(function(mod, "store7"), &hole, g);
    CU_OK(cuMemAddressFree(hole, g));
    CU_OK(cuDevicePrimaryCtxReset(dev));
    unsigned flags;
    int active = 1;
    CU_OK(cuDevicePrimaryCtxGetState(dev, &flags, &active));
    assert_int_equal(active, 0);
    CU_OK(cuDevicePrimaryCtxRelease(dev)); /* the reference held before the reset */
    CU_IS(cuDevicePrimaryCtxRelease(dev), CUDA_ERROR_INVALID_CONTEXT);
    cut_init(0);
    CU_OK(cuCtxSynchronize());
    CUmodule mod2 = load(store_ptx);
    store7_runs(function(mod2, "store7"));
    CU_OK(cuModuleUnload(mod2));
    CU_OK(cuDevicePrimaryCtxRelease(dev));
}

/* The primary context released by its last holder is destroyed, its fault
 * with it: retained again, it runs kernels. */
static void the_last_release_of_the_primary_context_clears_its_fault(void **state)
{
    (void)state;
    if (under_valgrind())
        fab_test_skip("memcheck reports the store to unmapped memory this test makes on purpose");
    cut_init(0);
    size_t g = cut_granularity(0);
    CUdevice dev;
    CU_OK(cuDeviceGet(&dev, 0));
    CUmodule mod = load(store_ptx);
    CUdeviceptr hole;
    fault_in_current_context(function(mod, "store7"), &hole, g);
    CU_OK(cuMemAddressFree(hole, g));
    CU_OK(cuDevicePrimaryCtxRelease(dev));
    cut_init(0);
    CU_OK(cuCtxSynchronize());
    CUmodule mod2 = load(store_ptx);
    store7_runs(function(mod2, "store7"));
    CU_OK(cuModuleUnload(mod2));
    CU_OK(cuDevicePrimaryCtxRelease(dev));
}

/* A read-only mapping (cuMemSetAccess READ): a store through it faults. */
static void a_store_to_read_only_memory_is_an_illegal_address(void **state)
{
    (void)state;
    cut_init(0);
    CUmodule mod = load(store_ptx);
    CUfunction f = function(mod, "store7");
    size_t g = cut_granularity(0);
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    CUmemGenericAllocationHandle h;
    CU_OK(cuMemCreate(&h, g, &prop, 0));
    CUdeviceptr p;
    CU_OK(cuMemAddressReserve(&p, g, 0, 0, 0));
    CU_OK(cuMemMap(p, g, 0, h, 0));
    CUmemAccessDesc ro = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READ);
    CU_OK(cuMemSetAccess(p, g, &ro, 1));
    void *params[] = {&p};
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    CU_IS(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    cut_unmap_free(p, g);
    CU_OK(cuMemRelease(h));
}

static void a_trap_fails_the_launch(void **state)
{
    (void)state;
    cut_init(0);
    CUmodule mod = load(trap_ptx);
    CUfunction f = function(mod, "boom");
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CU_IS(cuCtxSynchronize(), CUDA_ERROR_LAUNCH_FAILED);
}

static void device_printf_reaches_stdout(void **state)
{
    (void)state;
    cut_init(0);
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    fflush(stdout);
    int saved = dup(1);
    assert_true(saved >= 0);
    assert_true(dup2(pipefd[1], 1) >= 0);
    CUmodule mod = load(printf_ptx);
    CUfunction f = function(mod, "say");
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 2, 1, 1, 0, NULL, NULL, NULL));
    CU_OK(cuCtxSynchronize());
    fflush(stdout);
    assert_true(dup2(saved, 1) >= 0);
    close(saved);
    close(pipefd[1]);
    char buf[256] = "";
    ssize_t got = read(pipefd[0], buf, sizeof(buf) - 1);
    close(pipefd[0]);
    assert_true(got > 0);
    assert_string_equal(buf, "hello 42\nhello 42\n"); /* one line per thread */
    CU_OK(cuModuleUnload(mod));
}

static void the_linker_resolves_an_extern_function_across_inputs(void **state)
{
    (void)state;
    cut_init(0);
    CUlinkState link;
    CU_OK(cuLinkCreate(0, NULL, NULL, &link));
    CU_OK(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)caller_ptx, sizeof(caller_ptx), "caller",
                        0, NULL, NULL));
    CU_OK(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)callee_ptx, sizeof(callee_ptx), "callee",
                        0, NULL, NULL));
    void *image = NULL;
    size_t size = 0;
    CU_OK(cuLinkComplete(link, &image, &size));
    assert_non_null(image);
    assert_true(size > 0);
    CUmodule mod;
    CU_OK(cuModuleLoadData(&mod, image));
    CU_OK(cuLinkDestroy(link)); /* the module stands without the state */
    CUfunction f = function(mod, "call_twice");
    CUdeviceptr out;
    CU_OK(cuMemAlloc(&out, 4));
    unsigned x = 21;
    void *params[] = {&out, &x};
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    CU_OK(cuCtxSynchronize());
    unsigned got = 0;
    CU_OK(cuMemcpyDtoH(&got, out, 4));
    assert_int_equal(got, 42);
    CU_OK(cuMemFree(out));
    CU_OK(cuModuleUnload(mod));
}

/* One module declares an .extern function with a result, the module that
 * defines it returns none (numba-cuda's C-ABI device functions returning
 * void): they link, as NVIDIA's linker compiles each module alone, and the
 * call runs. */
static void a_call_may_name_a_result_the_function_does_not_return(void **state)
{
    (void)state;
    cut_init(0);
    static const char caller[] = PTX_HEAD
        ".extern .func (.param .b64 func_retval0) consume(.param .b64 consume_param_0);\n"
        ".visible .entry k(.param .u64 out)\n"
        "{\n"
        "  .reg .b64 %rd<3>;\n"
        "  ld.param.u64 %rd1, [out];\n"
        "  {\n"
        "  .param .b64 param0;\n"
        "  st.param.b64 [param0], %rd1;\n"
        "  .param .b64 retval0;\n"
        "  call.uni (retval0), consume, (param0);\n"
        "  ld.param.b64 %rd2, [retval0];\n"
        "  }\n"
        "  ret;\n"
        "}\n";
    static const char callee[] = PTX_HEAD
        ".visible .func consume(.param .b64 consume_param_0)\n"
        "{\n"
        "  .reg .b32 %r<2>;\n"
        "  .reg .b64 %rd<2>;\n"
        "  ld.param.u64 %rd1, [consume_param_0];\n"
        "  mov.u32 %r1, 7;\n"
        "  st.u32 [%rd1], %r1;\n"
        "  ret;\n"
        "}\n";
    CUlinkState link;
    CU_OK(cuLinkCreate(0, NULL, NULL, &link));
    CU_OK(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)caller, sizeof(caller), "caller", 0, NULL, NULL));
    CU_OK(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)callee, sizeof(callee), "callee", 0, NULL, NULL));
    void *image = NULL;
    size_t size = 0;
    CU_OK(cuLinkComplete(link, &image, &size));
    CUmodule mod;
    CU_OK(cuModuleLoadData(&mod, image));
    CU_OK(cuLinkDestroy(link));
    CUdeviceptr out;
    CU_OK(cuMemAlloc(&out, 4));
    CU_OK(cuMemsetD32(out, 0, 1));
    void *params[] = {&out};
    CU_OK(cuLaunchKernel(function(mod, "k"), 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    CU_OK(cuCtxSynchronize());
    uint32_t got = 0;
    CU_OK(cuMemcpyDtoH(&got, out, 4));
    assert_int_equal(got, 7);
    CU_OK(cuMemFree(out));
    CU_OK(cuModuleUnload(mod));
}

/* A parameter declared .align 16 is read as one 16-byte vector, as NCCL's
 * kernels read their argument struct: the launch's copy of the arguments
 * starts on a 16-byte boundary (a copy 8 bytes off made every such read a
 * misaligned access), and the second of two such parameters too. */
static void an_argument_aligned_to_16_bytes_is_read_as_one_vector(void **state)
{
    (void)state;
    cut_init(0);
    static const char ptx[] = PTX_HEAD
        ".visible .entry k(.param .align 16 .b8 a[16], .param .u64 out, .param .align 16 .b8 b[16])\n"
        "{\n"
        "  .reg .b64 %rd<6>;\n"
        "  ld.param.v2.u64 {%rd1, %rd2}, [a];\n"
        "  ld.param.v2.u64 {%rd3, %rd4}, [b];\n"
        "  ld.param.u64 %rd5, [out];\n"
        "  cvta.to.global.u64 %rd5, %rd5;\n"
        "  st.global.v2.u64 [%rd5], {%rd1, %rd2};\n"
        "  st.global.v2.u64 [%rd5+16], {%rd3, %rd4};\n"
        "  ret;\n"
        "}\n";
    CUmodule mod;
    CU_OK(cuModuleLoadData(&mod, ptx));
    CUdeviceptr out;
    CU_OK(cuMemAlloc(&out, 32));
    _Alignas(16) uint64_t a[2] = {0x1111222233334444u, 0x5555666677778888u};
    _Alignas(16) uint64_t b[2] = {0x99990000aaaabbbbu, 0xccccddddeeeeffffu};
    void *params[] = {a, &out, b};
    CU_OK(cuLaunchKernel(function(mod, "k"), 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
    CU_OK(cuCtxSynchronize());
    uint64_t got[4] = {0};
    CU_OK(cuMemcpyDtoH(got, out, sizeof(got)));
    assert_true(got[0] == a[0] && got[1] == a[1] && got[2] == b[0] && got[3] == b[1]);
    CU_OK(cuMemFree(out));
    CU_OK(cuModuleUnload(mod));
}

static void the_linker_takes_a_file_and_refuses_one_that_is_not_there(void **state)
{
    (void)state;
    cut_init(0);
    char *dir = fab_test_tempdir();
    assert_non_null(dir);
    char path[512];
    snprintf(path, sizeof(path), "%s/callee.ptx", dir);
    fab_test_write_file(path, callee_ptx);
    CUlinkState link;
    CU_OK(cuLinkCreate(0, NULL, NULL, &link));
    CU_OK(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)caller_ptx, sizeof(caller_ptx), "caller",
                        0, NULL, NULL));
    CU_OK(cuLinkAddFile(link, CU_JIT_INPUT_PTX, path, 0, NULL, NULL));
    char missing[600];
    snprintf(missing, sizeof(missing), "%s/none.ptx", dir);
    CU_IS(cuLinkAddFile(link, CU_JIT_INPUT_PTX, missing, 0, NULL, NULL), CUDA_ERROR_FILE_NOT_FOUND);
    void *image = NULL;
    CU_OK(cuLinkComplete(link, &image, NULL));
    CUmodule mod;
    CU_OK(cuModuleLoadData(&mod, image));
    CUfunction f = function(mod, "call_twice");
    (void)f;
    CU_OK(cuModuleUnload(mod));
    CU_OK(cuLinkDestroy(link));
    fab_test_rmtree(dir);
    free(dir);
}

static void the_linker_refuses_an_unresolved_extern_at_complete(void **state)
{
    (void)state;
    cut_init(0);
    char log[512] = "";
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {log, (void *)(uintptr_t)sizeof(log)};
    CUlinkState link;
    CU_OK(cuLinkCreate(2, opts, vals, &link));
    CU_OK(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)caller_ptx, sizeof(caller_ptx), "caller",
                        0, NULL, NULL));
    void *image = NULL;
    CU_IS(cuLinkComplete(link, &image, NULL), CUDA_ERROR_INVALID_PTX);
    assert_non_null(strstr(log, "twice"));
    CU_OK(cuLinkDestroy(link));
    CU_IS(cuLinkDestroy(link), CUDA_ERROR_INVALID_HANDLE);
}

static void malformed_ptx_fails_with_its_line_in_the_log(void **state)
{
    (void)state;
    cut_init(0);
    static const char bad[] = PTX_HEAD
        ".visible .entry k()\n"
        "{\n"
        "  .reg .b32 %r<2>;\n"
        "  mov.u32 %r1, ;\n"
        "  ret;\n"
        "}\n";
    char log[512] = "";
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {log, (void *)(uintptr_t)sizeof(log)};
    CUmodule mod;
    CU_IS(cuModuleLoadDataEx(&mod, bad, 2, opts, vals), CUDA_ERROR_INVALID_PTX);
    assert_non_null(strstr(log, "line 7"));
    CUlinkState link;
    char log2[512] = "";
    void *vals2[] = {log2, (void *)(uintptr_t)sizeof(log2)};
    CU_OK(cuLinkCreate(2, opts, vals2, &link));
    CU_IS(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)bad, sizeof(bad), "bad", 0, NULL, NULL),
          CUDA_ERROR_INVALID_PTX);
    assert_non_null(strstr(log2, "line 7"));
    CU_OK(cuLinkDestroy(link));
}

/* CUB's kernels have mangled names of hundreds of characters: a refused
 * instruction in one still says which instruction and why, the name cut
 * in its middle instead. */
static void a_refusal_in_a_long_named_kernel_keeps_its_reason_in_the_log(void **state)
{
    (void)state;
    cut_init(0);
    char name[401];
    memset(name, 'x', sizeof(name) - 1);
    memcpy(name, "_Z4head", 7);
    memcpy(name + sizeof(name) - 6, "_tail", 5);
    name[sizeof(name) - 1] = '\0';
    char ptx[1024];
    snprintf(ptx, sizeof(ptx),
             PTX_HEAD ".visible .entry %s()\n{\n  .reg .b32 %%r<3>;\n"
                      "  mov.u32 %%r1, 1;\n  add.relu.s32 %%r2, %%r1, %%r1;\n  ret;\n}\n",
             name);
    char log[512] = "";
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {log, (void *)(uintptr_t)sizeof(log)};
    CUmodule mod;
    CUresult r = cuModuleLoadDataEx(&mod, ptx, 2, opts, vals);
    assert_int_not_equal(r, CUDA_SUCCESS);
    assert_non_null(strstr(log, "PTX line 8: _Z4head"));
    assert_non_null(strstr(log, "..."));
    assert_non_null(strstr(log, "_tail: add.relu.s32"));
    assert_non_null(strstr(log, "not supported here"));
}

static void function_attributes_are_the_kernels(void **state)
{
    (void)state;
    cut_init(0);
    static const char ptx[] = PTX_HEAD
        ".visible .entry small() .maxntid 64, 1, 1\n"
        "{\n"
        "  .shared .align 4 .b8 buf[256];\n"
        "  ret;\n"
        "}\n";
    CUmodule mod = load(ptx);
    CUfunction f = function(mod, "small");
    int v = 0;
    CU_OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f));
    assert_int_equal(v, 64);
    CU_OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f));
    assert_int_equal(v, 256);
    /* more threads than .maxntid allows */
    CU_IS(cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, NULL, NULL, NULL));
    CU_OK(cuCtxSynchronize());
    CU_OK(cuModuleUnload(mod));
}

/* CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: the module's .const variables (the
 * user constant bank its kernels share; numba-cuda's const arrays and printf
 * formats live there), each at its alignment; a module without any answers 0. */
static void the_const_size_is_the_modules_const_variables(void **state)
{
    (void)state;
    cut_init(0);
    static const char ptx[] = PTX_HEAD
        ".const .align 8 .b8 table[80] = {1, 2, 3};\n"
        ".const .align 1 .b8 fmt[6];\n"
        ".const .align 8 .u64 one = 1;\n"
        ".global .align 4 .b8 notconst[400];\n"
        ".visible .entry reads(.param .u64 out)\n"
        "{\n"
        "  .reg .b64 %rd<3>;\n"
        "  ld.param.u64 %rd1, [out];\n"
        "  ld.const.u64 %rd2, [one];\n"
        "  st.global.u64 [%rd1], %rd2;\n"
        "  ret;\n"
        "}\n";
    CUmodule mod = load(ptx);
    int v = -1;
    CU_OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, function(mod, "reads")));
    assert_int_equal(v, 80 + 6 + 2 + 8); /* one at offset 88 */
    CU_OK(cuModuleUnload(mod));
    mod = load(store_ptx);
    CU_OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, function(mod, "store7")));
    assert_int_equal(v, 0);
    CU_OK(cuModuleUnload(mod));
}


/* A producer and a consumer kernel in two processes on one shared
 * allocation, passing ROUNDS rounds of 1024 values through release/acquire
 * flags at system scope, as NCCL's LL-style rings do: data at offset 0, the
 * producer's flag at 8192, the consumer's ack at 8256, the consumer's count
 * of wrong values at 8320. Each is one block of 128 threads; thread 0 of
 * each side does the flag work between two barriers. */
#define RING_ROUNDS 200
static const char ring_ptx[] = PTX_HEAD
    ".visible .entry producer(.param .u64 base, .param .u32 rounds)\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<8>;\n"
    "  .reg .b64 %rd<6>;\n"
    "  ld.param.u64 %rd1, [base];\n"
    "  ld.param.u32 %r1, [rounds];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  add.s64 %rd2, %rd1, 8192;\n"
    "  add.s64 %rd3, %rd1, 8256;\n"
    "  mov.u32 %r3, 1;\n"
    "ROUND:\n"
    "  setp.gt.u32 %p1, %r3, %r1;\n"
    "  @%p1 bra DONE;\n"
    "  mov.u32 %r4, %r2;\n"
    "FILL:\n"
    "  setp.ge.u32 %p2, %r4, 1024;\n"
    "  @%p2 bra FILLED;\n"
    "  mad.lo.s32 %r5, %r3, 100000, %r4;\n"
    "  mul.wide.u32 %rd4, %r4, 4;\n"
    "  add.s64 %rd5, %rd1, %rd4;\n"
    "  st.global.u32 [%rd5], %r5;\n"
    "  add.u32 %r4, %r4, 128;\n"
    "  bra FILL;\n"
    "FILLED:\n"
    "  bar.sync 0;\n"
    "  setp.ne.u32 %p3, %r2, 0;\n"
    "  @%p3 bra WAITED;\n"
    "  st.release.sys.global.u32 [%rd2], %r3;\n"
    "WAIT:\n"
    "  ld.acquire.sys.global.u32 %r6, [%rd3];\n"
    "  setp.ne.u32 %p1, %r6, %r3;\n"
    "  @%p1 bra WAIT;\n"
    "WAITED:\n"
    "  bar.sync 0;\n"
    "  add.u32 %r3, %r3, 1;\n"
    "  bra ROUND;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n"
    ".visible .entry consumer(.param .u64 base, .param .u32 rounds)\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<12>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  ld.param.u64 %rd1, [base];\n"
    "  ld.param.u32 %r1, [rounds];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  add.s64 %rd2, %rd1, 8192;\n"
    "  add.s64 %rd3, %rd1, 8256;\n"
    "  mov.u32 %r3, 1;\n"
    "  mov.u32 %r7, 0;\n"
    "  setp.ne.u32 %p3, %r2, 0;\n"
    "ROUND:\n"
    "  setp.gt.u32 %p1, %r3, %r1;\n"
    "  @%p1 bra DONE;\n"
    "  @%p3 bra SEEN;\n"
    "WAIT:\n"
    "  ld.acquire.sys.global.u32 %r6, [%rd2];\n"
    "  setp.ne.u32 %p1, %r6, %r3;\n"
    "  @%p1 bra WAIT;\n"
    "SEEN:\n"
    "  bar.sync 0;\n"
    "  mov.u32 %r4, %r2;\n"
    "CHECK:\n"
    "  setp.ge.u32 %p2, %r4, 1024;\n"
    "  @%p2 bra CHECKED;\n"
    "  mad.lo.s32 %r5, %r3, 100000, %r4;\n"
    "  mul.wide.u32 %rd4, %r4, 4;\n"
    "  add.s64 %rd5, %rd1, %rd4;\n"
    "  ld.global.u32 %r8, [%rd5];\n"
    "  setp.ne.u32 %p2, %r8, %r5;\n"
    "  selp.u32 %r9, 1, 0, %p2;\n"
    "  add.u32 %r7, %r7, %r9;\n"
    "  add.u32 %r4, %r4, 128;\n"
    "  bra CHECK;\n"
    "CHECKED:\n"
    "  bar.sync 0;\n"
    "  @%p3 bra NEXT;\n"
    "  st.release.sys.global.u32 [%rd3], %r3;\n"
    "NEXT:\n"
    "  add.u32 %r3, %r3, 1;\n"
    "  bra ROUND;\n"
    "DONE:\n"
    "  add.s64 %rd6, %rd1, 8320;\n"
    "  atom.global.add.u32 %r10, [%rd6], %r7;\n"
    "  ret;\n"
    "}\n";

/* helper "consumer": receive an fd, import and map it, run the consumer
 * kernel over it, say "done". */
static int helper_consumer(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    CUT_HELPER_READY(sock);
    int fd = fab_test_recv_fd(sock);
    if (fd < 0)
        return 14;
    size_t g = cut_granularity(0);
    CUmemGenericAllocationHandle h;
    HELPER_CU(cuMemImportFromShareableHandle(&h, (void *)(uintptr_t)fd,
                                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), 15);
    close(fd);
    CUdeviceptr ptr = cut_map_rw(h, g);
    CUmodule mod;
    HELPER_CU(cuModuleLoadData(&mod, ring_ptx), 16);
    CUfunction f;
    HELPER_CU(cuModuleGetFunction(&f, mod, "consumer"), 17);
    unsigned rounds = RING_ROUNDS;
    void *params[] = {&ptr, &rounds};
    HELPER_CU(cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, NULL, params, NULL), 18);
    HELPER_CU(cuCtxSynchronize(), 19);
    HELPER_CU(cuModuleUnload(mod), 20);
    cut_unmap_free(ptr, g);
    HELPER_CU(cuMemRelease(h), 21);
    return fab_test_send_word(sock, "done") == 0 ? 0 : 22;
}

static void kernels_in_two_processes_pass_data_through_release_and_acquire(void **state)
{
    (void)state;
    cut_init(0);
    size_t g = cut_granularity(0);
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    CUmemGenericAllocationHandle h;
    CU_OK(cuMemCreate(&h, g, &prop, 0));
    CUdeviceptr ptr = cut_map_rw(h, g);
    CU_OK(cuMemsetD8(ptr, 0, g));
    CUmodule mod = load(ring_ptx);
    CUfunction f = function(mod, "producer");
    unsigned rounds = RING_ROUNDS;
    void *params[] = {&ptr, &rounds};
    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, s, params, NULL));
    int fd = -1;
    CU_OK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("consumer", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send_fd(child.sock, fd), 0);
    close(fd);
    assert_int_equal(fab_test_expect_word(child.sock, "done"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    CU_OK(cuStreamSynchronize(s));
    unsigned words[3];
    CU_OK(cuMemcpyDtoH(&words[0], ptr + 8192, 4));
    CU_OK(cuMemcpyDtoH(&words[1], ptr + 8256, 4));
    CU_OK(cuMemcpyDtoH(&words[2], ptr + 8320, 4));
    assert_int_equal(words[0], RING_ROUNDS); /* every round released */
    assert_int_equal(words[1], RING_ROUNDS); /* and acknowledged */
    assert_int_equal(words[2], 0);           /* no value seen stale */
    CU_OK(cuStreamDestroy(s));
    CU_OK(cuModuleUnload(mod));
    cut_unmap_free(ptr, g);
    CU_OK(cuMemRelease(h));
}

/* A kernel that does not end is seen: after FABMEM_KERNEL_WATCH_MS the log
 * names it and where its warps spin. The test reads its own stderr through
 * a pipe until the line comes (bounded), then lets the kernel finish. */
static void a_kernel_that_does_not_end_is_logged_with_its_spinning_warps(void **state)
{
    (void)state;
    setenv("FABMEM_KERNEL_WATCH_MS", "100", 1);
    cut_init(0);
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    int saved = dup(2);
    assert_true(dup2(pipefd[1], 2) >= 0);
    CUmodule mod = load(wait_ptx);
    CUfunction f = function(mod, "wait_flag");
    unsigned *host;
    CU_OK(cuMemAllocHost((void **)&host, 2 * sizeof(unsigned)));
    host[0] = host[1] = 0;
    CUdeviceptr flag = (CUdeviceptr)(uintptr_t)&host[0], out = (CUdeviceptr)(uintptr_t)&host[1];
    void *params[] = {&flag, &out};
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
    char buf[4096];
    size_t have = 0;
    bool seen = false;
    for (int tries = 0; tries < 200 && !seen; tries++) { /* 200 x 50 ms at most */
        struct pollfd pfd = {pipefd[0], POLLIN, 0};
        if (poll(&pfd, 1, 50) == 1) {
            ssize_t got = read(pipefd[0], buf + have, sizeof(buf) - 1 - have);
            if (got > 0)
                have += (size_t)got;
            buf[have] = '\0';
            seen = strstr(buf, "kernel wait_flag still running") && strstr(buf, "PTX line");
        }
    }
    assert_true(dup2(saved, 2) >= 0);
    close(saved);
    close(pipefd[1]);
    close(pipefd[0]);
    __atomic_store_n(&host[0], 1u, __ATOMIC_RELEASE);
    CU_OK(cuCtxSynchronize());
    fprintf(stderr, "%s", buf);
    assert_true(seen);
    assert_int_equal(host[1], 2);
    CU_OK(cuMemFreeHost(host));
    CU_OK(cuModuleUnload(mod));
}

/* cuMemFree, cuMemUnmap and cuModuleUnload synchronise, as the driver's do
 * (cuda.h: cuMemUnmap "exhibits synchronous behavior"): memory a queued
 * kernel still writes, or the module of its code, goes only once the kernel
 * completed. NCCL's ncclCommAbort unmaps its buffers while a kernel of a
 * collective may still be on its way out. A second thread frees (or unmaps,
 * or unloads) while the kernel waits for the host; the host lets the kernel
 * go only after the thread said it is about to. */
typedef struct free_waiter {
    CUcontext ctx;
    CUdeviceptr dev;
    size_t unmap; /* unmapped instead (its size), when set */
    CUmodule mod; /* unloaded instead, when set */
    CUstream stream;
    int ready[2];
    CUresult freed, queried;
} free_waiter_t;

static void *free_while_the_kernel_waits(void *arg)
{
    free_waiter_t *w = arg;
    CU_OK(cuCtxSetCurrent(w->ctx));
    char c = 1;
    assert_int_equal(write(w->ready[1], &c, 1), 1);
    w->freed = w->mod ? cuModuleUnload(w->mod)
               : w->unmap ? cuMemUnmap(w->dev, w->unmap) : cuMemFree(w->dev);
    w->queried = cuStreamQuery(w->stream); /* done by then, and without a fault */
    return NULL;
}

enum { FREE_MEM, FREE_UNLOAD, FREE_UNMAP };

static void free_while_a_kernel_waits(int how)
{
    free_waiter_t w = {.ctx = cut_init(0)};
    CUmodule mod = load(wait_ptx);
    CUfunction f = function(mod, "wait_flag");
    unsigned *flag;
    CU_OK(cuMemAllocHost((void **)&flag, sizeof(unsigned)));
    *flag = 0;
    CUmemGenericAllocationHandle h = 0;
    size_t g = 0;
    if (how == FREE_UNMAP) {
        CUmemAllocationProp prop = cut_prop(0, 0);
        CU_OK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
        CU_OK(cuMemCreate(&h, g, &prop, 0));
        w.dev = cut_map_rw(h, g);
        w.unmap = g;
    } else {
        CU_OK(cuMemAlloc(&w.dev, 4096));
    }
    bool unload = how == FREE_UNLOAD;
    w.mod = unload ? mod : NULL;
    CUdeviceptr args[2] = {(CUdeviceptr)(uintptr_t)flag, w.dev};
    void *params[] = {&args[0], &args[1]};
    CU_OK(cuStreamCreate(&w.stream, CU_STREAM_NON_BLOCKING));
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, w.stream, params, NULL));
    assert_int_equal(pipe(w.ready), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, free_while_the_kernel_waits, &w), 0);
    char c;
    assert_int_equal(read(w.ready[0], &c, 1), 1);
    __atomic_store_n(flag, 1u, __ATOMIC_RELEASE);
    assert_int_equal(pthread_join(t, NULL), 0);
    CU_OK(w.freed);
    CU_OK(w.queried);
    CU_OK(cuCtxSynchronize());
    close(w.ready[0]);
    close(w.ready[1]);
    CU_OK(cuStreamDestroy(w.stream));
    CU_OK(cuMemFreeHost(flag));
    if (how == FREE_UNMAP) {
        CU_OK(cuMemAddressFree(w.dev, g));
        CU_OK(cuMemRelease(h));
    } else if (unload) {
        CU_OK(cuMemFree(w.dev));
    }
    CU_OK(unload ? CUDA_SUCCESS : cuModuleUnload(mod));
}

static void mem_free_waits_for_the_kernels_queued_before_it(void **state)
{
    (void)state;
    free_while_a_kernel_waits(FREE_MEM);
}

static void mem_unmap_waits_for_the_kernels_queued_before_it(void **state)
{
    (void)state;
    free_while_a_kernel_waits(FREE_UNMAP);
}

static void module_unload_waits_for_the_kernels_queued_before_it(void **state)
{
    (void)state;
    free_while_a_kernel_waits(FREE_UNLOAD);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(a_ptx_kernel_runs_without_a_plugin),
    cmocka_unit_test(a_launch_returns_before_the_kernel_runs_and_copies_its_arguments),
    cmocka_unit_test(mem_free_waits_for_the_kernels_queued_before_it),
    cmocka_unit_test(mem_unmap_waits_for_the_kernels_queued_before_it),
    cmocka_unit_test(module_unload_waits_for_the_kernels_queued_before_it),
    cmocka_unit_test(a_module_variable_is_the_one_its_kernels_use),
    cmocka_unit_test(a_packed_argument_buffer_is_taken_through_extra),
    cmocka_unit_test(an_argument_buffer_shorter_than_the_parameters_is_taken),
    cmocka_unit_test(an_illegal_address_stops_the_kernel_and_sticks),
    cmocka_unit_test(a_fault_stays_with_its_context),
    cmocka_unit_test(a_stream_synchronisation_answers_its_own_contexts_fault),
    cmocka_unit_test(resetting_the_primary_context_clears_its_fault),
    cmocka_unit_test(the_last_release_of_the_primary_context_clears_its_fault),
    cmocka_unit_test(a_store_to_read_only_memory_is_an_illegal_address),
    cmocka_unit_test(a_trap_fails_the_launch),
    cmocka_unit_test(device_printf_reaches_stdout),
    cmocka_unit_test(the_linker_resolves_an_extern_function_across_inputs),
    cmocka_unit_test(a_call_may_name_a_result_the_function_does_not_return),
    cmocka_unit_test(an_argument_aligned_to_16_bytes_is_read_as_one_vector),
    cmocka_unit_test(the_linker_takes_a_file_and_refuses_one_that_is_not_there),
    cmocka_unit_test(the_linker_refuses_an_unresolved_extern_at_complete),
    cmocka_unit_test(malformed_ptx_fails_with_its_line_in_the_log),
    cmocka_unit_test(a_refusal_in_a_long_named_kernel_keeps_its_reason_in_the_log),
    cmocka_unit_test(function_attributes_are_the_kernels),
    cmocka_unit_test(the_const_size_is_the_modules_const_variables),
    cmocka_unit_test(kernels_in_two_processes_pass_data_through_release_and_acquire),
    cmocka_unit_test(a_kernel_that_does_not_end_is_logged_with_its_spinning_warps),
};

static const fab_test_helper_t helpers[] = {
    {"consumer", helper_consumer},
};

FAB_TEST_MAIN("cuda", tests, helpers)
