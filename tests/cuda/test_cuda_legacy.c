/* The driver's older and rarer entry points (src/cuda/legacy.c, the 2D
 * memsets of src/cuda/copy.c), against cuda.h only, as PyCUDA links them:
 * 2D memsets, the execution control of CUDA before 4.0 running a PTX kernel,
 * the usage count of cuCtxAttach / cuCtxDetach, the cache and bank
 * configuration, managed memory, and CUDA arrays and texture references
 * refused. Each test is its own process, on the built-in topology (one node
 * of 8 GPUs, no daemon). */
#include "cuda_test.h"

/* Most of these entry points are deprecated in cuda.h: calling them is the point. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* out[tid.x] = base + tid.x + 1000 * ctaid.x, for the legacy launch. */
static const char fill_ptx[] =
    ".version 8.0\n.target sm_80\n.address_size 64\n"
    ".visible .entry fill(.param .u64 out, .param .u32 base)\n"
    "{\n"
    "  .reg .b32 %r<6>;\n  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [out];\n  ld.param.u32 %r1, [base];\n"
    "  mov.u32 %r2, %tid.x;\n  mov.u32 %r3, %ctaid.x;\n  mov.u32 %r4, %ntid.x;\n"
    "  mad.lo.u32 %r5, %r3, %r4, %r2;\n"
    "  mul.wide.u32 %rd2, %r5, 4;\n  add.u64 %rd3, %rd1, %rd2;\n"
    "  mad.lo.u32 %r3, %r3, 1000, %r2;\n  add.u32 %r3, %r3, %r1;\n"
    "  st.global.u32 [%rd3], %r3;\n  ret;\n"
    "}\n";

static void memset_d2d_fills_each_rows_width_and_leaves_the_pitch_gap(void **state)
{
    (void)state;
    cut_init(0);
    enum { PITCH = 64, WIDTH = 10, ROWS = 4 };
    CUdeviceptr d;
    CU_OK(cuMemAlloc(&d, PITCH * ROWS));
    CU_OK(cuMemsetD8(d, 0xee, PITCH * ROWS));
    CU_OK(cuMemsetD2D8(d, PITCH, 0x5a, WIDTH, ROWS));
    unsigned char b[PITCH * ROWS];
    CU_OK(cuMemcpyDtoH(b, d, sizeof(b)));
    for (int i = 0; i < PITCH * ROWS; i++)
        assert_int_equal(b[i], i % PITCH < WIDTH ? 0x5a : 0xee);
    /* 32-bit elements: Width counts elements, the pitch bytes. */
    CU_OK(cuMemsetD2D32Async(d, PITCH, 0x01020304u, 3, 2, NULL));
    CU_OK(cuStreamSynchronize(NULL));
    unsigned int w[PITCH / 4 * 2];
    CU_OK(cuMemcpyDtoH(w, d, sizeof(w)));
    for (int i = 0; i < PITCH / 4 * 2; i++)
        if (i % (PITCH / 4) < 3)
            assert_int_equal(w[i], 0x01020304u);
    assert_int_equal(w[3], 0xeeeeeeeeu); /* bytes 12..15 of row 0: past both fills */
    /* A pitch shorter than a row, a misaligned pitch for 16-bit elements. */
    CU_IS(cuMemsetD2D8(d, 4, 0, WIDTH, 2), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemsetD2D16(d, 63, 0, 2, 2), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemFree(d));
}

static void legacy_launch_runs_the_kernel_with_the_shape_and_parameters_set_before(void **state)
{
    (void)state;
    cut_init(0);
    CUmodule mod;
    CU_OK(cuModuleLoadData(&mod, fill_ptx));
    CUfunction f;
    CU_OK(cuModuleGetFunction(&f, mod, "fill"));
    enum { THREADS = 32, BLOCKS = 3 };
    CUdeviceptr d;
    CU_OK(cuMemAlloc(&d, THREADS * BLOCKS * 4));
    CU_OK(cuMemsetD8(d, 0, THREADS * BLOCKS * 4));
    /* The parameters in the kernel's packed layout: a pointer, then a u32. */
    CU_OK(cuFuncSetBlockShape(f, THREADS, 1, 1));
    CU_OK(cuParamSetv(f, 0, &d, sizeof(d)));
    CU_OK(cuParamSeti(f, 8, 7));
    CU_OK(cuParamSetSize(f, 12));
    CU_OK(cuLaunchGrid(f, BLOCKS, 1));
    CU_OK(cuCtxSynchronize());
    unsigned int out[THREADS * BLOCKS];
    CU_OK(cuMemcpyDtoH(out, d, sizeof(out)));
    for (unsigned i = 0; i < THREADS * BLOCKS; i++)
        assert_int_equal(out[i], 7 + i % THREADS + 1000 * (i / THREADS));
    /* Bounds of the 4 KiB parameter space, a bad shape, a handle that is no function. */
    CU_IS(cuParamSetv(f, 4093, &d, 4), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuParamSetSize(f, 4097), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuFuncSetBlockShape(f, 0, 1, 1), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuFuncSetBlockShape((CUfunction)&out, 1, 1, 1), CUDA_ERROR_INVALID_HANDLE);
    CU_OK(cuMemFree(d));
    CU_OK(cuModuleUnload(mod));
}

static void context_attach_counts_and_the_last_detach_destroys(void **state)
{
    (void)state;
    CU_OK(cuInit(0));
    CUcontext ctx, again;
    CU_OK(cuCtxCreate(&ctx, NULL, 0, 0));
    CU_OK(cuCtxAttach(&again, 0));
    assert_ptr_equal(again, ctx);
    CU_IS(cuCtxAttach(&again, 1), CUDA_ERROR_INVALID_VALUE);
    unsigned int version = 0;
    CU_OK(cuCtxGetApiVersion(ctx, &version));
    assert_int_equal(version, 3020);
    CU_OK(cuCtxDetach(ctx)); /* back to cuCtxCreate's one use */
    CU_OK(cuCtxGetApiVersion(ctx, &version));
    CU_OK(cuCtxDetach(ctx)); /* the last one: destroyed */
    CU_IS(cuCtxGetApiVersion(ctx, &version), CUDA_ERROR_INVALID_CONTEXT);
    CU_IS(cuCtxDetach(ctx), CUDA_ERROR_INVALID_CONTEXT);
}

static void cache_and_bank_configuration_read_back_what_is_set(void **state)
{
    (void)state;
    cut_init(0);
    CUfunc_cache cache;
    CU_OK(cuCtxGetCacheConfig(&cache));
    assert_int_equal(cache, CU_FUNC_CACHE_PREFER_NONE);
    CU_OK(cuCtxSetCacheConfig(CU_FUNC_CACHE_PREFER_L1));
    CU_OK(cuCtxGetCacheConfig(&cache));
    assert_int_equal(cache, CU_FUNC_CACHE_PREFER_L1);
    CU_IS(cuCtxSetCacheConfig((CUfunc_cache)9), CUDA_ERROR_INVALID_VALUE);
    CUsharedconfig bank;
    CU_OK(cuCtxGetSharedMemConfig(&bank));
    assert_int_equal(bank, CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE);
    CU_OK(cuCtxSetSharedMemConfig(CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE));
    CU_OK(cuCtxGetSharedMemConfig(&bank));
    assert_int_equal(bank, CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE);
    CU_IS(cuCtxSetSharedMemConfig((CUsharedconfig)3), CUDA_ERROR_INVALID_VALUE);
    /* Another context has its own. */
    CUcontext other;
    CU_OK(cuCtxCreate(&other, NULL, 0, 1));
    CU_OK(cuCtxGetCacheConfig(&cache));
    assert_int_equal(cache, CU_FUNC_CACHE_PREFER_NONE);
    CU_OK(cuCtxDestroy(other));
}

static void managed_memory_is_device_memory_the_host_reaches(void **state)
{
    (void)state;
    cut_init(0);
    CUdeviceptr m;
    CU_OK(cuMemAllocManaged(&m, 4096, CU_MEM_ATTACH_GLOBAL));
    memset((void *)(uintptr_t)m, 0x11, 4096);
    CU_OK(cuMemsetD32(m, 0xabcdef01u, 2));
    assert_int_equal(((unsigned int *)(uintptr_t)m)[1], 0xabcdef01u);
    assert_int_equal(((unsigned char *)(uintptr_t)m)[8], 0x11);
    CU_OK(cuStreamAttachMemAsync(NULL, m, 0, CU_MEM_ATTACH_HOST));
    CU_IS(cuStreamAttachMemAsync(NULL, m, 0, 0), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemAllocManaged(&m, 4096, 0), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuMemFree(m));
}

static void arrays_and_texture_references_are_not_supported(void **state)
{
    (void)state;
    CUtexref t = NULL;
    cut_init(0);
    CU_IS(cuTexRefCreate(&t), CUDA_ERROR_NOT_SUPPORTED);
    CUmodule mod;
    CU_OK(cuModuleLoadData(&mod, fill_ptx));
    CU_IS(cuModuleGetTexRef(&t, mod, "tex"), CUDA_ERROR_NOT_SUPPORTED);
    CU_IS(cuArrayDestroy(NULL), CUDA_ERROR_NOT_SUPPORTED);
    CU_OK(cuModuleUnload(mod));
}

static void older_entry_points_are_found_through_get_proc_address(void **state)
{
    (void)state;
    cut_init(0);
    static const char *const names[] = {
        "cuMemsetD2D8", "cuMemsetD2D32Async", "cuFuncSetBlockShape", "cuParamSetv",
        "cuLaunchGrid", "cuCtxAttach",         "cuCtxGetApiVersion",  "cuMemAllocManaged",
        "cuArrayCreate", "cuTexRefCreate",     "cuProfilerStart"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        void *fn = NULL;
        CUdriverProcAddressQueryResult found;
        CU_OK(cuGetProcAddress(names[i], &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &found));
        assert_int_equal(found, CU_GET_PROC_ADDRESS_SUCCESS);
        assert_non_null(fn);
    }
    /* The profiler's switches (cudaProfiler.h) succeed: no profiler is attached. */
    void *start = NULL;
    CU_OK(cuGetProcAddress("cuProfilerStart", &start, 13000, CU_GET_PROC_ADDRESS_DEFAULT, NULL));
    CUresult (*profiler_start)(void);
    memcpy(&profiler_start, &start, sizeof(start));
    CU_OK(profiler_start());
    void *fn = NULL, *direct;
    CUresult (*set)(CUdeviceptr, size_t, unsigned char, size_t, size_t) = cuMemsetD2D8;
    memcpy(&direct, &set, sizeof(direct));
    CU_OK(cuGetProcAddress("cuMemsetD2D8", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, NULL));
    assert_ptr_equal(fn, direct);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(memset_d2d_fills_each_rows_width_and_leaves_the_pitch_gap),
    cmocka_unit_test(legacy_launch_runs_the_kernel_with_the_shape_and_parameters_set_before),
    cmocka_unit_test(context_attach_counts_and_the_last_detach_destroys),
    cmocka_unit_test(cache_and_bank_configuration_read_back_what_is_set),
    cmocka_unit_test(managed_memory_is_device_memory_the_host_reaches),
    cmocka_unit_test(arrays_and_texture_references_are_not_supported),
    cmocka_unit_test(older_entry_points_are_found_through_get_proc_address),
};

FAB_TEST_MAIN_NO_HELPERS("cuda", tests)
