/* cuKernelSetCacheConfig against cuda.h only: a library's kernel keeps the
 * preference, and the call refuses what cuFuncSetCacheConfig refuses. */
#include "cuda_test.h"

static const char kernel_ptx[] =
    ".version 8.0\n"
    ".target sm_80\n"
    ".address_size 64\n"
    ".visible .entry nothing()\n"
    "{\n"
    "    ret;\n"
    "}\n";

static void kernel_cache_config_is_kept_for_a_library_kernel_and_checked(void **state)
{
    (void)state;
    cut_init(0);
    CUlibrary lib;
    CU_OK(cuLibraryLoadData(&lib, kernel_ptx, NULL, NULL, 0, NULL, NULL, 0));
    CUkernel k;
    CU_OK(cuLibraryGetKernel(&k, lib, "nothing"));
    CU_OK(cuKernelSetCacheConfig(k, CU_FUNC_CACHE_PREFER_SHARED, 0));
    CU_OK(cuKernelSetCacheConfig(k, CU_FUNC_CACHE_PREFER_NONE, 0));
    CU_IS(cuKernelSetCacheConfig(k, (CUfunc_cache)9, 0), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuKernelSetCacheConfig(k, CU_FUNC_CACHE_PREFER_L1, 99), CUDA_ERROR_INVALID_DEVICE);
    /* A module's function is not a CUkernel. */
    CUmodule mod;
    CU_OK(cuModuleLoadData(&mod, kernel_ptx));
    CUfunction f;
    CU_OK(cuModuleGetFunction(&f, mod, "nothing"));
    CU_IS(cuKernelSetCacheConfig((CUkernel)f, CU_FUNC_CACHE_PREFER_L1, 0), CUDA_ERROR_INVALID_HANDLE);
    CU_OK(cuModuleUnload(mod));
    /* It launches as before. */
    CU_OK(cuLaunchKernel((CUfunction)k, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    CU_OK(cuCtxSynchronize());
    void *fn = NULL;
    CU_OK(cuGetProcAddress("cuKernelSetCacheConfig", &fn, 12000, 0, NULL));
    assert_non_null(fn);
    CU_OK(cuLibraryUnload(lib));
    CU_IS(cuKernelSetCacheConfig(k, CU_FUNC_CACHE_PREFER_L1, 0), CUDA_ERROR_INVALID_HANDLE);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(kernel_cache_config_is_kept_for_a_library_kernel_and_checked),
};

FAB_TEST_MAIN_NO_HELPERS("cuda", tests)
